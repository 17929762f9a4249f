import { describe, expect, it } from 'vitest';
import { executeDispatch, executeJobId, executeJobSchema } from '@agent-saga/core';

const step = { run_id: 'run-1182', step_idx: 3, idempotency_key: 'k3' };

describe('the execute job (one schema, one builder)', () => {
  it('builds the wire format the outbox and BullMQ have always carried', () => {
    // Exactly the data and job ids jobs written before the builder moved to core carry.
    expect(executeDispatch(step, 1)).toEqual({
      jobId: 'k3',
      data: { runId: 'run-1182', stepIdx: 3, key: 'k3', dispatchNo: 1 },
    });
    expect(executeDispatch(step, 4)).toEqual({
      jobId: 'k3-d4',
      data: { runId: 'run-1182', stepIdx: 3, key: 'k3', dispatchNo: 4 },
    });
    expect(JSON.stringify(executeDispatch(step, 1).data)).toBe(
      '{"runId":"run-1182","stepIdx":3,"key":"k3","dispatchNo":1}',
    );
    expect([1, 2].map((n) => executeJobId('k3', n))).toEqual(['k3', 'k3-d2']);
  });

  it('parses a job of a running version, and refuses one that is not an execute job', () => {
    const stored = JSON.parse('{"runId":"run-1182","stepIdx":0,"key":"k0","dispatchNo":2}') as unknown;
    expect(executeJobSchema.parse(stored)).toEqual({
      runId: 'run-1182',
      stepIdx: 0,
      key: 'k0',
      dispatchNo: 2,
    });
    for (const bad of [
      { runId: 'r', stepIdx: -1, key: 'k', dispatchNo: 1 },
      { runId: 'r', stepIdx: 0, key: 'k', dispatchNo: 0 },
      { runId: 'r', stepIdx: 0, dispatchNo: 1 },
    ])
      expect(executeJobSchema.safeParse(bad).success).toBe(false);
  });
});
