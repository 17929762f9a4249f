/**
 * What the model reads for refusals it cannot meet against the sandbox's default run (a budget, a code
 * the dispatcher adds later), built from the client's own error classes as the client throws them.
 */
import { describe, expect, it } from 'vitest';
import {
  BudgetExceededError,
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  ServiceUnavailableError,
  ToolOutcomeUnknown,
} from '@agent-saga/client';
import { errorResult } from '../src/refusal-result.js';
import { UNKNOWN_WHAT_TO_DO } from '../src/tool-result.js';

describe('refusals as results the model can act on', () => {
  it('passes a budget refusal through with its field, limit and use, and says not to retry', () => {
    const err = new BudgetExceededError({
      code: 'BUDGET_EXCEEDED',
      status: 409,
      message: 'the run may take 3 steps',
      field: 'budget.maxSteps',
      details: { limit: 3, used: 3 },
    });
    expect(errorResult(err)).toEqual({
      status: 'REFUSED',
      code: 'BUDGET_EXCEEDED',
      message: 'the run may take 3 steps',
      field: 'budget.maxSteps',
      details: { limit: 3, used: 3 },
      whatToDo: expect.stringContaining('Do not retry it') as string,
    });
  });

  it('maps a code it has never heard of by the code itself, with generic advice', () => {
    const err = new ConflictError({
      code: 'QUOTA_FROZEN',
      status: 409,
      message: 'the tenant quota is frozen',
      details: { until: '2026-12-02' },
    });
    expect(errorResult(err)).toEqual({
      status: 'REFUSED',
      code: 'QUOTA_FROZEN',
      message: 'the tenant quota is frozen',
      details: { until: '2026-12-02' },
      whatToDo: expect.stringContaining('wrote nothing') as string,
    });
  });

  it('carries the settled outcome a STEP_UNRESOLVED refusal brings, and the fields of a mismatch', () => {
    const outcome = {
      status: 'CONFIRMED' as const,
      stepIdx: 0,
      idempotencyKey: 'k',
      externalRef: 'SUP-1',
      result: {},
      replayed: true,
    };
    expect(
      errorResult(new ConflictError({ code: 'STEP_UNRESOLVED', status: 409, message: 'm', outcome })),
    ).toMatchObject({ code: 'STEP_UNRESOLVED', details: { outcome } });
    expect(
      errorResult(
        new ConflictError({ code: 'IDEMPOTENCY_MISMATCH', status: 409, message: 'm', fields: ['orderId'] }),
      ),
    ).toMatchObject({
      code: 'IDEMPOTENCY_MISMATCH',
      fields: ['orderId'],
      whatToDo: expect.stringContaining('original arguments') as string,
    });
    expect(
      errorResult(
        new InvalidRequestError({ code: 'INVALID_ARGS', status: 400, message: 'm', field: 'amount' }),
      ),
    ).toMatchObject({ code: 'INVALID_ARGS', field: 'amount' });
  });

  it('an unknown outcome and an unreachable harness both say: the same call again, it never acts twice', () => {
    const unknown = errorResult(
      new ToolOutcomeUnknown({ stepIdx: 2, idempotencyKey: 'k', message: 'timed out', status: 200 }),
    );
    expect(unknown).toEqual({
      status: 'UNKNOWN',
      stepIdx: 2,
      message: 'timed out',
      whatToDo: UNKNOWN_WHAT_TO_DO,
    });
    const down = errorResult(
      new ServiceUnavailableError({ code: 'UNAVAILABLE', status: null, message: 'ECONNREFUSED' }),
    );
    expect(down).toMatchObject({
      status: 'UNAVAILABLE',
      whatToDo: expect.stringContaining('never acts twice') as string,
    });
  });

  it('throws what the app must fix: an unknown run, and errors that are not the client’s', () => {
    const missing = new NotFoundError({ code: 'NOT_FOUND', status: 404, message: 'no such run' });
    expect(() => errorResult(missing)).toThrow(missing);
    const bug = new TypeError('x is undefined');
    expect(() => errorResult(bug)).toThrow(bug);
  });
});
