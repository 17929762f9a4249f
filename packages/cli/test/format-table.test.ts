import { describe, expect, it } from 'vitest';
import { formatTable } from '../src/format-table.js';

describe('formatTable', () => {
  it('pads columns to their widest cell, right-aligns numbers, and shows missing values as -', () => {
    const rows = [
      { runId: 'order-42', status: 'RUNNING', steps: 3, reason: null },
      { runId: 'r7', status: 'MANUAL_INTERVENTION', steps: 12, reason: 'lookup\nfailed' },
    ];
    const text = formatTable(
      [
        { header: 'RUN', value: (r: (typeof rows)[number]) => r.runId },
        { header: 'STATUS', value: (r) => r.status },
        { header: 'STEPS', value: (r) => r.steps, align: 'right' },
        { header: 'REASON', value: (r) => r.reason },
      ],
      rows,
    );
    expect(text).toBe(
      [
        'RUN       STATUS               STEPS  REASON',
        'order-42  RUNNING                  3  -',
        'r7        MANUAL_INTERVENTION     12  lookup failed',
        '',
      ].join('\n'),
    );
  });

  it('prints the header alone for no rows', () => {
    expect(formatTable([{ header: 'ID', value: (r: { id: string }) => r.id }], [])).toBe('ID\n');
  });
});
