import { describe, expect, it } from 'vitest';
import { resolveStep, StepConflictError, StepUnresolvedError, type ResolutionInput } from '@agent-saga/core';

const base: ResolutionInput = {
  tool: 'create_note',
  requestedIdx: undefined,
  cursor: 2,
  existing: undefined,
  earlierUnknownIdx: undefined,
};
const row = (
  tool: string,
  status: 'INTENDED' | 'UNKNOWN' | 'CONFIRMED' | 'FAILED',
  outcomeDelivered = false,
) => ({
  tool,
  status,
  outcomeDelivered,
});

describe('resolveStep with an explicit stepIdx', () => {
  it('takes a free index as a new step', () => {
    expect(resolveStep({ ...base, requestedIdx: 5 })).toEqual({ kind: 'new', stepIdx: 5 });
  });
  it('treats the same tool at an occupied index as a retry, whatever its status', () => {
    for (const s of ['INTENDED', 'UNKNOWN', 'CONFIRMED', 'FAILED'] as const)
      expect(resolveStep({ ...base, requestedIdx: 1, existing: row('create_note', s) })).toEqual({
        kind: 'retry',
        stepIdx: 1,
      });
  });
  it('refuses another tool at an occupied index (STEP_CONFLICT)', () => {
    expect(() =>
      resolveStep({ ...base, requestedIdx: 1, existing: row('send_notice', 'CONFIRMED', true) }),
    ).toThrow(StepConflictError);
  });
  it('refuses a new index while an earlier step is UNKNOWN (STEP_UNRESOLVED)', () => {
    expect(() => resolveStep({ ...base, requestedIdx: 3, earlierUnknownIdx: 1 })).toThrow(
      StepUnresolvedError,
    );
  });
});

describe('resolveStep at the cursor', () => {
  it('takes the cursor as a new step when it is free', () => {
    expect(resolveStep(base)).toEqual({ kind: 'new', stepIdx: 2 });
  });
  it('retries the cursor step for the same tool, even when it settled meanwhile', () => {
    expect(resolveStep({ ...base, existing: row('create_note', 'CONFIRMED') })).toEqual({
      kind: 'retry',
      stepIdx: 2,
    });
  });
  it('refuses another tool while the cursor step is unsettled, without an outcome', () => {
    for (const s of ['INTENDED', 'UNKNOWN'] as const) {
      const attempt = () => resolveStep({ ...base, tool: 'send_notice', existing: row('create_note', s) });
      expect(attempt).toThrow(StepUnresolvedError);
    }
  });
  it('delivers, then refuses, another tool at a settled step the caller has not seen', () => {
    expect(resolveStep({ ...base, tool: 'send_notice', existing: row('create_note', 'FAILED') })).toEqual({
      kind: 'deliver-and-refuse',
      stepIdx: 2,
    });
  });
});
