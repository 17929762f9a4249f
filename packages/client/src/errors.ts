import type { UnseenOutcome } from './call-outcome.js';

/**
 * Errors say what the agent backend must do. Each carries the dispatcher's stable `code` and the HTTP
 * `status`; `field`, `fields` and `outcome` are set when the dispatcher sent them.
 *
 * - {@link InvalidRequestError} (400, and other 4xx refusals such as a pure tool's 422): the call was
 *   refused and nothing was written. Fix it; repeating it unchanged gets the same answer.
 * - {@link UnauthorizedError} (401/403): the token is unknown, revoked, or lacks the role
 *   ({@link ForbiddenError}: an agent token deciding what only an operator may).
 * - {@link NotFoundError} (404): no such run, approval, case or correction for this tenant (another
 *   tenant's looks the same).
 * - {@link ConflictError} (409): the log refuses the call as it stands (`code` says why). Subclasses for
 *   the refusals a person meets: {@link ApprovalHashMismatchError} (the proposal changed since it was
 *   read), {@link ApprovalDecidedError} (decisions are single use), {@link CaseActionRefusedError},
 *   {@link PivotRequiredError}, {@link RunNotRunningError} (the run takes no calls, or no longer waits for
 *   the approval being decided), {@link DuplicateOperationError} (the run did this already, as an earlier
 *   step: use that step's outcome), {@link NotInDefinitionError}, {@link PlanMismatchError} and
 *   {@link BudgetExceededError} (the run's definition, plan or budget refuses the call). A plan refused at
 *   creation is a {@link PlanInvalidError} (400).
 * - {@link RateLimitedError} (429): the token sent too many requests; nothing was done (a call wrote
 *   nothing). Wait `retryAfterMs`, then send it again.
 * - {@link ApprovalExpiredError} (410): the deadline passed; the run needs a new proposal.
 * - {@link ToolOutcomeUnknown}: the tool may or may not have acted. Retry the same step, never a new one.
 * - {@link ServiceUnavailableError}: no usable answer (network, 5xx). A call may have been recorded: retry
 *   with the same `stepIdx`, which the dispatcher treats as a retry of that step.
 *   {@link CorrectionOutcomeUnknownError} (502): a correction may have been sent; send it again (same key).
 *
 * A code this client maps to a subclass gets it only with the status the dispatcher sends it with; any
 * other pairing falls back to the status's family, so an `instanceof` never claims more than was said.
 * - {@link UnexpectedResponseError}: the answer does not match the dispatcher's wire format.
 */

/** The error codes the dispatcher sends, each defined once. */
export const ApiErrorCode = {
  BAD_REQUEST: 'BAD_REQUEST',
  INVALID_ARGS: 'INVALID_ARGS',
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  STEP_CONFLICT: 'STEP_CONFLICT',
  STEP_UNRESOLVED: 'STEP_UNRESOLVED',
  IDEMPOTENCY_MISMATCH: 'IDEMPOTENCY_MISMATCH',
  /**
   * 409: a new step repeats the operation (same tool, same identity arguments) of an earlier step of the
   * run that may have taken effect; nothing was written. `stepIdx`, `status` (and, when CONFIRMED,
   * `externalRef` and `result`) name the earlier step.
   */
  DUPLICATE_OPERATION: 'DUPLICATE_OPERATION',
  /**
   * 409: the run is not in a status that takes this: a side-effecting call (a run compensating, awaiting
   * approval or terminal), or a decision on an approval its run no longer waits for (an unwound run).
   */
  RUN_NOT_RUNNING: 'RUN_NOT_RUNNING',
  /** 400: `createRun` named a saga definition (`field` `definition.name`) or version it does not declare. */
  UNKNOWN_DEFINITION: 'UNKNOWN_DEFINITION',
  /** 400: `createRun`'s plan does not fit its definition; `field` names the entry (`plan[2].step`). */
  PLAN_INVALID: 'PLAN_INVALID',
  /** 409: a call on a run bound to a definition names a tool it does not allow; nothing was written. */
  NOT_IN_DEFINITION: 'NOT_IN_DEFINITION',
  /** 409: a call differs from the run's planned entry in identity arguments (`field`, `fields`). */
  PLAN_MISMATCH: 'PLAN_MISMATCH',
  /** 409: the call would pass the run's budget (`field`: `budget.maxSteps`, `budget.maxAmount.usd`, …). */
  BUDGET_EXCEEDED: 'BUDGET_EXCEEDED',
  /**
   * 409: the run holds as many steps as the dispatcher allows (SAGA_MAX_STEPS_PER_RUN, `limit`); a new step
   * is refused, nothing written. (An explicit `stepIdx` past the cap is 400 BAD_REQUEST naming `stepIdx`.)
   */
  STEP_LIMIT: 'STEP_LIMIT',
  /**
   * 429: this token sent more requests than its rate allows; nothing was done. `retryAfterMs` says when one
   * more is allowed ({@link RateLimitedError}).
   */
  RATE_LIMITED: 'RATE_LIMITED',
  /**
   * 503: a run bound to a definition was not completed: its business invariant could not be checked (a
   * vendor did not answer); nothing moved. Ask again later (`ServiceUnavailableError`).
   */
  INVARIANT_UNVERIFIED: 'INVARIANT_UNVERIFIED',
  /** `createRun` with a run id another tenant already uses. */
  RUN_ID_TAKEN: 'RUN_ID_TAKEN',
  /** A pure tool's own refusal (422): the real system said no to a read. */
  CLIENT_ERROR: 'CLIENT_ERROR',
  /** 409: the run's policy `requirePivot` refuses an irreversible call outside a pivot. */
  PIVOT_REQUIRED: 'PIVOT_REQUIRED',
  /** 409: the run's pivot is approved; it only rolls forward and takes no new calls or proposals. */
  PIVOT_STAGED: 'PIVOT_STAGED',
  /** 409: the decision (or correction send/edit) carried the hash of another proposal than the current one. */
  APPROVAL_HASH_MISMATCH: 'APPROVAL_HASH_MISMATCH',
  /** 409 (a `ConflictError`): `setPolicy` named a version of the policy floor that is no longer current. */
  POLICY_VERSION_MISMATCH: 'POLICY_VERSION_MISMATCH',
  /** 409: the approval or correction was decided already (`details.status` says how). */
  APPROVAL_DECIDED: 'APPROVAL_DECIDED',
  /** 410: the approval's deadline passed. */
  APPROVAL_EXPIRED: 'APPROVAL_EXPIRED',
  /** 409: the case is resolved already, or the action does not fit it. */
  CASE_ACTION_REFUSED: 'CASE_ACTION_REFUSED',
  /** 422: the vendor refused the correction; nothing was sent and it stays open. */
  CORRECTION_REFUSED: 'CORRECTION_REFUSED',
  /** 502: nobody knows whether the correction went out; the email lookup by its key settles it. */
  CORRECTION_OUTCOME_UNKNOWN: 'CORRECTION_OUTCOME_UNKNOWN',
  /** 409: a send of the correction has started and is not settled: no edit, dismissal or second send yet. */
  CORRECTION_SENDING: 'CORRECTION_SENDING',
  /** 409: the correction moved between the dispatcher's read and its write (a sweep settled it). */
  INVALID_CORRECTION_TRANSITION: 'INVALID_CORRECTION_TRANSITION',
  /** 500: the dispatcher failed; the request may be retried. */
  INTERNAL: 'INTERNAL',
} as const;
export type ApiErrorCode = (typeof ApiErrorCode)[keyof typeof ApiErrorCode];

/** Codes the client itself assigns when the dispatcher gave none. */
export const LocalErrorCode = {
  OUTCOME_UNKNOWN: 'OUTCOME_UNKNOWN',
  UNAVAILABLE: 'UNAVAILABLE',
  UNEXPECTED_RESPONSE: 'UNEXPECTED_RESPONSE',
} as const;

export interface ApiErrorInit {
  readonly code: string;
  readonly message: string;
  /** HTTP status of the answer; null when none arrived (network failure). */
  readonly status: number | null;
  readonly field?: string | undefined;
  readonly fields?: readonly string[] | undefined;
  readonly outcome?: UnseenOutcome | undefined;
  /** Everything else the dispatcher put in `error` (e.g. `existingTool`, `stepIdx`). */
  readonly details?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
}

/** Base of every error this client throws. */
export abstract class SagaApiError extends Error {
  readonly code: string;
  readonly status: number | null;
  /** The failing argument's dotted path (INVALID_ARGS) or the malformed body field (BAD_REQUEST). */
  readonly field: string | undefined;
  /** The identity arguments that differ from the stored intent (IDEMPOTENCY_MISMATCH). */
  readonly fields: readonly string[] | undefined;
  /** The settled outcome of an earlier step the caller had not yet seen (STEP_UNRESOLVED may carry it). */
  readonly outcome: UnseenOutcome | undefined;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status;
    this.field = init.field;
    this.fields = init.fields;
    this.outcome = init.outcome;
    this.details = init.details ?? {};
  }
}

/**
 * 400: BAD_REQUEST, INVALID_ARGS (with `field`), UNKNOWN_TOOL; also any other 4xx refusal in the
 * dispatcher's error shape (CLIENT_ERROR 422 from a pure tool). Nothing was written.
 */
export class InvalidRequestError extends SagaApiError {}

/** 401 UNAUTHORIZED, or 403 FORBIDDEN for a token whose role may not do this. */
export class UnauthorizedError extends SagaApiError {}

/**
 * 403 FORBIDDEN: the token is valid but its role may not do this (an agent token deciding an approval,
 * resolving a case, sending a correction). Use an operator token.
 */
export class ForbiddenError extends UnauthorizedError {}

/** 404: the run (approval, case, correction) does not exist for this token's tenant. */
export class NotFoundError extends SagaApiError {}

/**
 * 409: STEP_CONFLICT (another tool holds this step index), STEP_UNRESOLVED (an earlier step is still
 * unresolved; may carry its settled `outcome`), IDEMPOTENCY_MISMATCH (`fields` changed an intent),
 * RUN_NOT_RUNNING (the run accepts no new side-effecting calls), RUN_ID_TAKEN (another tenant's run id).
 */
export class ConflictError extends SagaApiError {}

/**
 * 409 APPROVAL_HASH_MISMATCH: the decision named a proposal (or correction message) that is no longer the
 * one waiting: it changed since it was read. Nothing was decided; read it again and decide on what will
 * actually execute.
 */
export class ApprovalHashMismatchError extends ConflictError {}

/** 409 APPROVAL_DECIDED: decisions are single use; this one was approved, rejected, superseded or sent. */
export class ApprovalDecidedError extends ConflictError {
  /** The status the approval (or correction) has, when the dispatcher said (`superseded`, `approved`, …). */
  get decidedStatus(): string | undefined {
    const s = this.details.status;
    return typeof s === 'string' ? s : undefined;
  }
}

/**
 * 409 RUN_NOT_RUNNING: the run is not in a status that takes this. On a call: it accepts no new
 * side-effecting calls (compensating, awaiting approval, terminal). On a decision: the approval's run no
 * longer waits for it (it was unwound, or ended): nothing was decided and nothing will be sent.
 * `runStatus` is the run's status, when the dispatcher said.
 */
export class RunNotRunningError extends ConflictError {
  get runStatus(): string | undefined {
    const s = this.details.runStatus;
    return typeof s === 'string' ? s : undefined;
  }
}

/**
 * 409 DUPLICATE_OPERATION: this call, as a new step, repeats an earlier step of the run that may have taken
 * effect (the same tool with the same identity arguments: a second `create_ticket` for the same order).
 * Nothing was written. Use the earlier step's outcome (`externalRef` when it is CONFIRMED), or call it again
 * at its own `stepIdx` to learn it; do not reach the same goal another way.
 */
export class DuplicateOperationError extends ConflictError {
  /** The index of the earlier step this call repeats. */
  get earlierStepIdx(): number | undefined {
    const i = this.details.stepIdx;
    return typeof i === 'number' ? i : undefined;
  }

  /**
   * The earlier step's status: CONFIRMED, AWAITING_APPROVAL or MANUAL_INTERVENTION (a repeat of an INTENDED or
   * UNKNOWN step is refused STEP_UNRESOLVED instead, until it settles).
   */
  get earlierStatus(): string | undefined {
    const s = this.details.status;
    return typeof s === 'string' ? s : undefined;
  }

  /** The earlier step's external ref (the ticket, the charge), when it is CONFIRMED and has one. */
  get externalRef(): string | undefined {
    const r = this.details.externalRef;
    return typeof r === 'string' ? r : undefined;
  }

  /**
   * Whether the earlier step had exactly this call's arguments (as the tool's schema parsed them): the call
   * was sent again, not reworded. False when the server does not say (an older dispatcher).
   */
  get sameArgs(): boolean {
    return this.details.sameArgs === true;
  }
}

/**
 * 400 PLAN_INVALID: the plan given to `createRun` does not fit the run's definition (a step it does not
 * declare, a step listed before one it depends on, an irreversible step before the pivot, arguments its
 * tool refuses). `field` names the entry (`plan[2].step`, `plan[3].args.amount`). No run was created.
 */
export class PlanInvalidError extends InvalidRequestError {}

/**
 * 409 NOT_IN_DEFINITION: the run is bound to a saga definition that does not allow this tool (or every
 * step of it is taken). Nothing was written; `definition` names the run's definition when said.
 */
export class NotInDefinitionError extends ConflictError {
  get definition(): { name: string; version: number } | undefined {
    const d = this.details.definition as { name?: unknown; version?: unknown } | undefined;
    return d && typeof d.name === 'string' && typeof d.version === 'number'
      ? { name: d.name, version: d.version }
      : undefined;
  }
}

/**
 * 409 PLAN_MISMATCH: the call's identity arguments differ from the run's planned entry (`field`, `fields`:
 * `args.orderId`; `planEntry`: its index in the plan). Nothing was written: call it as planned.
 */
export class PlanMismatchError extends ConflictError {
  get planEntry(): number | undefined {
    const i = this.details.planEntry;
    return typeof i === 'number' ? i : undefined;
  }
}

/**
 * 409 BUDGET_EXCEEDED: the call would pass the run's budget; `field` names the limit (`budget.maxSteps`,
 * `budget.maxAmount.usd`, `budget.deadline`, `budget.maxAttempts`), `limit` and `used` what it is and what
 * the run has used. Nothing was written; the run takes no such call again.
 */
export class BudgetExceededError extends ConflictError {
  get limit(): number | string | undefined {
    const l = this.details.limit;
    return typeof l === 'number' || typeof l === 'string' ? l : undefined;
  }

  get used(): number | string | undefined {
    const u = this.details.used;
    return typeof u === 'number' || typeof u === 'string' ? u : undefined;
  }
}

/**
 * 409 STEP_LIMIT: the run holds as many steps as the dispatcher allows (`limit`: SAGA_MAX_STEPS_PER_RUN).
 * Nothing was written; its steps still answer retries, but new work needs another run.
 */
export class StepLimitError extends ConflictError {
  get limit(): number | undefined {
    const l = this.details.limit;
    return typeof l === 'number' ? l : undefined;
  }
}

/**
 * 429 RATE_LIMITED: this token sent more requests than its rate allows (SAGA_RATE_LIMIT_PER_MINUTE). The
 * dispatcher did nothing: a call was not recorded, so a run handle gives its index back. Send it again
 * after `retryAfterMs`.
 */
export class RateLimitedError extends SagaApiError {
  /** How long to wait before one more request is allowed, in ms (the body's `retryAfterMs`). */
  get retryAfterMs(): number | undefined {
    const ms = this.details.retryAfterMs;
    return typeof ms === 'number' ? ms : undefined;
  }
}

/** 409 CASE_ACTION_REFUSED: the case is resolved already, or the action does not fit it. */
export class CaseActionRefusedError extends ConflictError {}

/**
 * 409 CORRECTION_SENDING: a send of this correction has started (`sending`) or may have gone out
 * (`unknown`). Nothing changed. It is settled by the email lookup by its key (by the reconciler, or by the
 * next send); read it again later. `believableAt`: from when a "not found" will be believed, when said.
 */
export class CorrectionSendingError extends ConflictError {
  get believableAt(): string | undefined {
    const b = this.details.believableAt;
    return typeof b === 'string' ? b : undefined;
  }
}

/** 409 PIVOT_REQUIRED: the run's policy wants this irreversible call proposed in a pivot (`details.tool`). */
export class PivotRequiredError extends ConflictError {}

/** 410 APPROVAL_EXPIRED: nobody decided before the deadline; the run needs a new proposal. */
export class ApprovalExpiredError extends InvalidRequestError {}

/** 422 CORRECTION_REFUSED: the vendor refused the correction; nothing was sent, it stays open. */
export class CorrectionRefusedError extends InvalidRequestError {}

/** The network failed or the dispatcher answered 5xx. For a call: retry with the same `stepIdx`. */
export class ServiceUnavailableError extends SagaApiError {}

/**
 * 502 CORRECTION_OUTCOME_UNKNOWN: the correction may or may not have gone out. It is `unknown` until the
 * email lookup by its key settles it (the reconciler's sweep does). Sending it again settles it first:
 * found, nothing is sent; proven absent, the same message goes out under the same key, never a second one.
 */
export class CorrectionOutcomeUnknownError extends ServiceUnavailableError {}

/** The dispatcher's answer does not match its wire format (or has a status this client does not expect). */
export class UnexpectedResponseError extends SagaApiError {}

/**
 * The tool may or may not have acted (timeout, 5xx from the real system, a crash), and the harness will
 * resolve it. `message` is written for a model: show it as the tool's result. Retry the SAME step (same
 * `stepIdx`, same tool) to learn the outcome; never issue the call as a new step.
 */
export class ToolOutcomeUnknown extends SagaApiError {
  readonly stepIdx: number;
  readonly idempotencyKey: string;

  constructor(init: { stepIdx: number; idempotencyKey: string; message: string; status: number }) {
    super({ code: LocalErrorCode.OUTCOME_UNKNOWN, message: init.message, status: init.status });
    this.stepIdx = init.stepIdx;
    this.idempotencyKey = init.idempotencyKey;
  }
}

type ErrorClass = new (init: ApiErrorInit) => SagaApiError;

/** The codes with their own class, each with the only status the dispatcher sends it with. */
const CLASS_BY_CODE: Readonly<Record<string, { readonly status: number; readonly cls: ErrorClass }>> = {
  [ApiErrorCode.FORBIDDEN]: { status: 403, cls: ForbiddenError },
  [ApiErrorCode.APPROVAL_HASH_MISMATCH]: { status: 409, cls: ApprovalHashMismatchError },
  [ApiErrorCode.APPROVAL_DECIDED]: { status: 409, cls: ApprovalDecidedError },
  [ApiErrorCode.RUN_NOT_RUNNING]: { status: 409, cls: RunNotRunningError },
  [ApiErrorCode.DUPLICATE_OPERATION]: { status: 409, cls: DuplicateOperationError },
  [ApiErrorCode.PLAN_INVALID]: { status: 400, cls: PlanInvalidError },
  [ApiErrorCode.NOT_IN_DEFINITION]: { status: 409, cls: NotInDefinitionError },
  [ApiErrorCode.PLAN_MISMATCH]: { status: 409, cls: PlanMismatchError },
  [ApiErrorCode.BUDGET_EXCEEDED]: { status: 409, cls: BudgetExceededError },
  [ApiErrorCode.STEP_LIMIT]: { status: 409, cls: StepLimitError },
  [ApiErrorCode.RATE_LIMITED]: { status: 429, cls: RateLimitedError },
  [ApiErrorCode.CASE_ACTION_REFUSED]: { status: 409, cls: CaseActionRefusedError },
  [ApiErrorCode.PIVOT_REQUIRED]: { status: 409, cls: PivotRequiredError },
  [ApiErrorCode.CORRECTION_SENDING]: { status: 409, cls: CorrectionSendingError },
  [ApiErrorCode.APPROVAL_EXPIRED]: { status: 410, cls: ApprovalExpiredError },
  [ApiErrorCode.CORRECTION_REFUSED]: { status: 422, cls: CorrectionRefusedError },
  [ApiErrorCode.CORRECTION_OUTCOME_UNKNOWN]: { status: 502, cls: CorrectionOutcomeUnknownError },
};

/** The class of an error answer: the code's own class when the status agrees, else the status's family. */
export function errorClassFor(status: number, code: string): ErrorClass {
  const own = Object.hasOwn(CLASS_BY_CODE, code) ? CLASS_BY_CODE[code] : undefined;
  return own && own.status === status ? own.cls : errorClassForStatus(status);
}

/** Maps an error status onto its family; statuses outside 4xx and 5xx are unexpected. */
export function errorClassForStatus(status: number): ErrorClass {
  if (status === 401 || status === 403) return UnauthorizedError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status >= 400 && status < 500) return InvalidRequestError;
  if (status >= 500) return ServiceUnavailableError;
  return UnexpectedResponseError;
}
