import { describe, expect, it } from 'vitest';
import { formatFields, prettyJson, timeWithDistance } from '../src/format-fields.js';

describe('formatFields', () => {
  it('aligns values, shows missing ones as -, and indents every line of a long value', () => {
    const text = formatFields(
      [
        ['hash', 'ab12'],
        ['decided', null],
        ['args', prettyJson({ to: 'ada@example.com' })],
      ],
      '  ',
    );
    expect(text).toBe(
      [
        '  hash     ab12',
        '  decided  -',
        '  args     {',
        '             "to": "ada@example.com"',
        '           }',
        '',
      ].join('\n'),
    );
  });
});

describe('timeWithDistance', () => {
  it('says how far a deadline is, ahead or behind', () => {
    const now = Date.parse('2026-01-01T00:00:00.000Z');
    expect(timeWithDistance('2026-01-02T02:30:00.000Z', now)).toBe('2026-01-02T02:30:00.000Z (in 1d 2h)');
    expect(timeWithDistance('2026-01-01T01:05:00.000Z', now)).toBe('2026-01-01T01:05:00.000Z (in 1h 5m)');
    expect(timeWithDistance('2025-12-31T23:57:00.000Z', now)).toBe('2025-12-31T23:57:00.000Z (3m ago)');
  });
});
