import { describe, expect, it } from 'vitest';
import {
  IdempotencyMismatchError,
  InvalidArgsError,
  NotFoundError,
  RunNotRunningError,
  StepConflictError,
  StepStatus,
  StepUnresolvedError,
  ToolNotRegisteredError,
  valuesOf,
} from '@agent-saga/core';
import { ApiErrorCode, CallStatus, OPEN_LOG_STATUSES, SETTLED_CALL_STATUSES } from '@agent-saga/client';

/**
 * The client does not import core at run time (an agent backend should not pull in Postgres drivers), so
 * its wire constants are checked against core's here instead of being derived from them.
 */
describe('the client wire constants agree with @agent-saga/core', () => {
  it('every call status but PURE is a step status', () => {
    const stepStatuses: readonly string[] = valuesOf(StepStatus);
    for (const s of valuesOf(CallStatus).filter((s) => s !== CallStatus.PURE))
      expect(stepStatuses).toContain(s);
  });

  it('a step in the log is either settled or open for a retry, never neither', () => {
    const both = [...SETTLED_CALL_STATUSES, ...OPEN_LOG_STATUSES].sort();
    expect(both).toEqual(valuesOf(StepStatus).sort());
  });

  it('the codes of core errors the HTTP layer sends are known to the client', () => {
    const codes: readonly string[] = valuesOf(ApiErrorCode);
    const coreCodes = [
      new InvalidArgsError('f', 'm').code,
      new ToolNotRegisteredError('t').code,
      new NotFoundError('m').code,
      new StepConflictError(0, 't', 'm').code,
      new StepUnresolvedError(0, 'm').code,
      new IdempotencyMismatchError(0, ['f']).code,
      new RunNotRunningError('r', 'COMPLETED').code,
    ];
    for (const code of coreCodes) expect(codes).toContain(code);
  });
});
