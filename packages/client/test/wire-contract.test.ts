import { describe, expect, it } from 'vitest';
import * as core from '@agent-saga/core';
import {
  ApprovalDecidedError,
  ApprovalExpiredError,
  ApprovalHashMismatchError,
  CaseActionError,
  ForbiddenError,
  IdempotencyMismatchError,
  InvalidArgsError,
  NotFoundError,
  PivotRequiredError,
  PivotStagedError,
  RunNotRunningError,
  StepConflictError,
  StepStatus,
  StepUnresolvedError,
  ToolNotRegisteredError,
  valuesOf,
} from '@agent-saga/core';
import * as client from '@agent-saga/client';
import { ApiErrorCode, CallStatus, OPEN_LOG_STATUSES, SETTLED_CALL_STATUSES } from '@agent-saga/client';
import { errorClassFor } from '../src/errors.js';

/** The earlier step a DUPLICATE_OPERATION names. */
const DUPLICATE_OF = {
  stepIdx: 0,
  status: StepStatus.CONFIRMED,
  idempotencyKey: 'k',
  externalRef: 'SUP-1',
  result: {},
} as const;

/** The definition a NOT_IN_DEFINITION names. */
const DEFINITION = { name: 'refund_and_reship', version: 1 } as const;

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
      new core.DuplicateOperationError('t', DUPLICATE_OF).code,
      new core.UnknownDefinitionError('definition.name', 'm').code,
      new core.PlanInvalidError('plan[0].step', 'm').code,
      new core.NotInDefinitionError('t', DEFINITION, 'm').code,
      new core.PlanMismatchError('t', 0, ['args.orderId'], 'm').code,
      new core.BudgetExceededError('budget.maxSteps', 1, 1, 'm').code,
      new RunNotRunningError('r', 'COMPLETED').code,
      new ForbiddenError('m').code,
      new PivotRequiredError('t', 'why').code,
      new PivotStagedError('r', null).code,
      new ApprovalHashMismatchError('a', 'h').code,
      new ApprovalDecidedError('a', 'approved').code,
      new ApprovalExpiredError('a', new Date()).code,
      new CaseActionError('c', 'm').code,
      new core.CorrectionSendingError('c', 'sending').code,
      new core.InvalidCorrectionTransitionError('c', 'sent', 'open').code,
    ];
    for (const code of coreCodes) expect(codes).toContain(code);
  });

  it('the limits codes (a full run, a rate-limited token) are the same in core and the client', () => {
    // Core's StepLimitError is thrown inside its intake; the 429 class lives in the dispatcher. Their codes
    // have one home in core's ErrorCode, which the client mirrors with the statuses it expects them with.
    expect(ApiErrorCode.STEP_LIMIT).toBe(core.ErrorCode.STEP_LIMIT);
    expect(ApiErrorCode.RATE_LIMITED).toBe(core.ErrorCode.RATE_LIMITED);
    expect(errorClassFor(409, core.ErrorCode.STEP_LIMIT)).toBe(client.StepLimitError);
    expect(errorClassFor(429, core.ErrorCode.RATE_LIMITED)).toBe(client.RateLimitedError);
  });

  it('each core refusal carries the status the client expects its code with', () => {
    // [core error, the client class an answer with the error's own status and code becomes]
    const refusals: readonly [core.SagaError, abstract new (...a: never[]) => client.SagaApiError][] = [
      [new InvalidArgsError('f', 'm'), client.InvalidRequestError],
      [new ToolNotRegisteredError('t'), client.InvalidRequestError],
      [new NotFoundError('m'), client.NotFoundError],
      [new ForbiddenError('m'), client.ForbiddenError],
      [new StepConflictError(0, 't', 'm'), client.ConflictError],
      [new StepUnresolvedError(0, 'm'), client.ConflictError],
      [new IdempotencyMismatchError(0, ['f']), client.ConflictError],
      [new core.DuplicateOperationError('t', DUPLICATE_OF), client.DuplicateOperationError],
      [new core.UnknownDefinitionError('definition.name', 'm'), client.InvalidRequestError],
      [new core.PlanInvalidError('plan[0].step', 'm'), client.PlanInvalidError],
      [new core.NotInDefinitionError('t', DEFINITION, 'm'), client.NotInDefinitionError],
      [new core.PlanMismatchError('t', 0, ['args.orderId'], 'm'), client.PlanMismatchError],
      [new core.BudgetExceededError('budget.maxSteps', 1, 1, 'm'), client.BudgetExceededError],
      [new RunNotRunningError('r', 'COMPLETED'), client.RunNotRunningError],
      [new PivotRequiredError('t', 'why'), client.PivotRequiredError],
      [new PivotStagedError('r', null), client.ConflictError],
      [new ApprovalHashMismatchError('a', 'h'), client.ApprovalHashMismatchError],
      [new ApprovalDecidedError('a', 'approved'), client.ApprovalDecidedError],
      [new ApprovalExpiredError('a', new Date()), client.ApprovalExpiredError],
      [new CaseActionError('c', 'm'), client.CaseActionRefusedError],
      [new core.CorrectionSendingError('c', 'sending'), client.CorrectionSendingError],
      [new core.InvalidCorrectionTransitionError('c', 'sent', 'open'), client.ConflictError],
      [new core.ClientError('m'), client.InvalidRequestError],
    ];
    for (const [err, expected] of refusals)
      expect(errorClassFor(err.httpStatus, err.code), `${err.name} ${err.httpStatus}`).toBe(expected);
    // A harness failure is never answered as a refusal: it is a 500 the client retries.
    expect(new core.InvalidTransitionError('r', 0, 'CONFIRMED', 'FAILED').httpStatus).toBe(500);
    expect(errorClassFor(500, 'INTERNAL')).toBe(client.ServiceUnavailableError);
  });

  // Each client object against the core object it mirrors (the client's CaseStatus is core's ReviewStatus).
  it.each([
    ['RunStatus', client.RunStatus, core.RunStatus],
    ['ApprovalKind', client.ApprovalKind, core.ApprovalKind],
    ['ApprovalStatus', client.ApprovalStatus, core.ApprovalStatus],
    ['Decision', client.Decision, core.Decision],
    ['CaseStatus', client.CaseStatus, core.ReviewStatus],
    ['CaseAction', client.CaseAction, core.CaseAction],
    ['CorrectionStatus', client.CorrectionStatus, core.CorrectionStatus],
  ] as const)('%s has the same keys and values as core', (_name, mine, theirs) => {
    expect(mine).toEqual({ ...theirs });
  });
});
