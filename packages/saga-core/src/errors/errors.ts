import { StepStatus } from '../steps/step-status.js';
import { ErrorCode } from './error-code.js';

/**
 * Errors say what the runtime must do. Each has a stable `code` from {@link ErrorCode} that the HTTP layer
 * and the client use, and the HTTP status an API answer gives it (`httpStatus`).
 *
 * - {@link ClientError}: the real system said no; nothing happened. The step is FAILED.
 * - {@link OutcomeUnknownError}: it may have happened. The step is UNKNOWN until a lookup decides.
 * - Everything else is a harness error: refuse the request, change nothing.
 */
export abstract class SagaError extends Error {
  abstract readonly code: ErrorCode;
  /**
   * The status of the API's answer when this error reaches a request: a refusal's 4xx (or a 502 for a
   * failure past the harness), answered with `code`, `message` and {@link httpFields}. The default, 500,
   * is the harness's own failure: answered `INTERNAL` with the message hidden (it may name internals).
   * Named `httpStatus`, not `status`: `classifyToolError` stores an error's numeric `status` as the
   * vendor's, and several errors carry a domain `status` (an approval's, a run's).
   */
  readonly httpStatus: number = 500;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }

  /**
   * What the API's answer carries beside `code` and `message` (`{ error: { code, message, …fields } }`),
   * part of the wire format `@agent-saga/client` reads. Only a refusal (`httpStatus` not 500) shows it.
   */
  httpFields(): Readonly<Record<string, unknown>> {
    return {};
  }
}

/** Thrown by a tool when the real system definitively rejected the call: nothing happened. */
export class ClientError extends SagaError {
  readonly code = ErrorCode.CLIENT_ERROR;
  /** Answered by the API only for a pure tool: a side-effecting tool's refusal is a FAILED step. */
  override readonly httpStatus = 422;
  constructor(
    message: string,
    readonly details: { status?: number; vendorCode?: string; [k: string]: unknown } = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  override httpFields() {
    return { details: this.details };
  }
}

/** The call may or may not have taken effect (timeout, 5xx, reset, abort, crash). */
export class OutcomeUnknownError extends SagaError {
  readonly code = ErrorCode.OUTCOME_UNKNOWN;
}

/** A tool definition is invalid; raised at registration, before anything runs. */
export class ToolDefinitionError extends SagaError {
  readonly code = ErrorCode.TOOL_DEFINITION;
  constructor(
    readonly tool: string,
    readonly field: string,
    message: string,
  ) {
    super(`tool ${JSON.stringify(tool)}: ${field}: ${message}`);
  }
}

/**
 * A saga definition (`defineSaga`) that cannot be registered: its spec is malformed, or it does not fit the
 * tools it is registered with. `field` names the offending part as written (`steps[2].tool`,
 * `steps[3].dependsOn`); `saga` is its name and version (`refund_and_reship@2`; `(module)` when the
 * module's export itself is wrong).
 */
export class SagaDefinitionError extends SagaError {
  readonly code = ErrorCode.SAGA_DEFINITION;
  constructor(
    readonly saga: string,
    readonly field: string,
    message: string,
  ) {
    super(`saga ${JSON.stringify(saga)}: ${field}: ${message}`);
  }
}

export class ToolNotRegisteredError extends SagaError {
  readonly code = ErrorCode.UNKNOWN_TOOL;
  override readonly httpStatus = 400;
  constructor(readonly tool: string) {
    super(`tool ${JSON.stringify(tool)} is not registered`);
  }

  override httpFields() {
    return { field: 'tool', tool: this.tool };
  }
}

/** One failing field of a refused input: its dotted path and what is wrong with it. */
export interface FieldIssue {
  readonly field: string;
  readonly message: string;
}

/**
 * A 400 that names the field: `field` is the dotted path of the first failing one (undefined when the input
 * as a whole is wrong), `issues` every failing field. The shape of every "bad input" answer.
 */
export abstract class FieldRefusal extends SagaError {
  override readonly httpStatus = 400;
  constructor(
    readonly field: string | undefined,
    message: string,
    readonly issues: readonly FieldIssue[] = [],
  ) {
    super(message);
  }

  override httpFields() {
    return { field: this.field, issues: this.issues };
  }
}

/**
 * A request failed its schema or its own rules (`dependsOn` naming a later step, a malformed body).
 * `field` is the dotted path of the first failing field. In core because the intake that raises it for
 * `dependsOn` runs in the API and in a caller's own transaction alike (`recordCallerIntent`).
 */
export class BadRequestError extends FieldRefusal {
  readonly code = ErrorCode.BAD_REQUEST;
}

/** Arguments failed the tool's schema. `field` is the dotted path of the first failing argument. */
export class InvalidArgsError extends FieldRefusal {
  readonly code = ErrorCode.INVALID_ARGS;
  declare readonly field: string;
  constructor(field: string, message: string, issues: readonly FieldIssue[] = []) {
    super(field, message, issues);
  }
}

/** A compare-and-set on a step found it in a state that may not move to the target. */
export class InvalidTransitionError extends SagaError {
  readonly code = ErrorCode.INVALID_TRANSITION;
  constructor(
    readonly runId: string,
    readonly stepIdx: number,
    readonly from: string | null,
    readonly to: string,
  ) {
    super(`step ${runId}#${stepIdx}: ${from ?? '(missing)'} → ${to} is not a legal transition`);
  }
}

/** Another tool already holds this step index. */
export class StepConflictError extends SagaError {
  readonly code = ErrorCode.STEP_CONFLICT;
  override readonly httpStatus = 409;
  constructor(
    readonly stepIdx: number,
    readonly existingTool: string,
    message: string,
  ) {
    super(message);
  }

  override httpFields() {
    return { stepIdx: this.stepIdx, existingTool: this.existingTool };
  }
}

/** An earlier step is unresolved (or its settled outcome was not yet seen by the caller). */
export class StepUnresolvedError extends SagaError {
  readonly code = ErrorCode.STEP_UNRESOLVED;
  override readonly httpStatus = 409;
  constructor(
    readonly stepIdx: number,
    message: string,
    readonly outcome?: Record<string, unknown>,
  ) {
    super(message);
  }

  override httpFields() {
    return { stepIdx: this.stepIdx, ...(this.outcome ? { outcome: this.outcome } : {}) };
  }
}

/** A retry changed an argument that defines the intent (`identity`). */
export class IdempotencyMismatchError extends SagaError {
  readonly code = ErrorCode.IDEMPOTENCY_MISMATCH;
  override readonly httpStatus = 409;
  constructor(
    readonly stepIdx: number,
    readonly fields: readonly string[],
  ) {
    super(
      `step ${stepIdx} was called with different identity arguments (${fields.join(', ')}); ` +
        'a retry must describe the same intent; call a new step for a new intent',
    );
  }

  override httpFields() {
    return { stepIdx: this.stepIdx, fields: this.fields };
  }
}

/**
 * A new step repeats the business operation of an earlier step of the same run that may have taken effect
 * (see `findDuplicateOperation`): a replanned `create_ticket` for the same order. Nothing was written. The
 * answer names the earlier step (`stepIdx`, `status`, `tool`, its `idempotencyKey`) and, when it is
 * CONFIRMED, its outcome (`externalRef`, `result`), so the agent can use that effect instead of making a
 * second one.
 */
export class DuplicateOperationError extends SagaError {
  readonly code = ErrorCode.DUPLICATE_OPERATION;
  override readonly httpStatus = 409;
  constructor(
    readonly tool: string,
    readonly earlier: {
      readonly stepIdx: number;
      readonly status: StepStatus;
      readonly idempotencyKey: string;
      readonly externalRef: string | null;
      readonly result: unknown;
      readonly sameArgs?: boolean;
    },
  ) {
    super(
      `${tool}: this operation was already called as step ${earlier.stepIdx} of this run ` +
        `(${earlier.status}); use that step's outcome (call it again at stepIdx ${earlier.stepIdx} to read ` +
        'it) instead of calling it as a new step',
    );
  }

  override httpFields() {
    const confirmed = this.earlier.status === StepStatus.CONFIRMED;
    return {
      stepIdx: this.earlier.stepIdx,
      status: this.earlier.status,
      tool: this.tool,
      idempotencyKey: this.earlier.idempotencyKey,
      // true: the earlier step had exactly these (parsed) arguments; this is a re-issue of it.
      sameArgs: this.earlier.sameArgs ?? false,
      ...(confirmed ? { externalRef: this.earlier.externalRef, result: this.earlier.result } : {}),
    };
  }
}

/**
 * The run is not in a status that takes this: a side-effecting call (by default), or a decision on an
 * approval the run no longer waits for (`refused` names what, e.g. an approval of an unwound run).
 */
export class RunNotRunningError extends SagaError {
  readonly code = ErrorCode.RUN_NOT_RUNNING;
  override readonly httpStatus = 409;
  constructor(
    readonly runId: string,
    readonly status: string,
    refused = 'accepts no new side-effecting calls',
  ) {
    super(`run ${runId} is ${status} and ${refused}`);
  }

  override httpFields() {
    return { runId: this.runId, runStatus: this.status };
  }
}

/** `POST /v1/runs` named a saga definition, or a version of one, that the tool module does not declare. */
export class UnknownDefinitionError extends FieldRefusal {
  readonly code = ErrorCode.UNKNOWN_DEFINITION;
  declare readonly field: 'definition.name' | 'definition.version';
  constructor(field: 'definition.name' | 'definition.version', message: string) {
    super(field, `${field}: ${message}`);
  }
}

/**
 * A run's plan does not fit its definition: an unknown step, a step listed before one it depends on, an
 * irreversible step before the pivot, arguments the step's tool refuses. `field` names the entry
 * (`plan[2].step`, `plan[3].args.amount`); nothing was written.
 */
export class PlanInvalidError extends FieldRefusal {
  readonly code = ErrorCode.PLAN_INVALID;
  declare readonly field: string;
  constructor(field: string, message: string, issues: readonly FieldIssue[] = []) {
    super(field, `${field}: ${message}`, issues);
  }
}

/** A call on a run bound to a definition names a tool the definition does not allow. Nothing was written. */
export class NotInDefinitionError extends SagaError {
  readonly code = ErrorCode.NOT_IN_DEFINITION;
  override readonly httpStatus = 409;
  constructor(
    readonly tool: string,
    readonly definition: { readonly name: string; readonly version: number },
    why: string,
  ) {
    super(`${tool}: ${why} (run bound to ${definition.name}@${definition.version})`);
  }

  override httpFields() {
    return { field: 'tool', tool: this.tool, definition: this.definition };
  }
}

/**
 * A call on a run with a plan differs from the planned entry it was matched to in its identity arguments
 * (`fields`: `args.orderId`, …; `field` the first). Nothing was written: the plan a person may have read is
 * what runs, or the run is created anew with another plan.
 */
export class PlanMismatchError extends SagaError {
  readonly code = ErrorCode.PLAN_MISMATCH;
  override readonly httpStatus = 409;
  constructor(
    readonly tool: string,
    readonly planEntry: number | null,
    readonly fields: readonly string[],
    message: string,
  ) {
    super(message);
  }

  override httpFields() {
    return { field: this.fields[0], fields: this.fields, tool: this.tool, planEntry: this.planEntry };
  }
}

/**
 * The call would pass the run's budget: `field` names the limit (`budget.maxSteps`, `budget.maxAmount.usd`,
 * `budget.deadline`, `budget.maxAttempts`), with the limit and what the run has used. Nothing was written.
 */
export class BudgetExceededError extends SagaError {
  readonly code = ErrorCode.BUDGET_EXCEEDED;
  override readonly httpStatus = 409;
  constructor(
    readonly field: string,
    readonly limit: number | string,
    readonly used: number | string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }

  override httpFields() {
    return { field: this.field, limit: this.limit, used: this.used };
  }
}

/**
 * A new step at the run's cursor would pass the cap on steps per run (SAGA_MAX_STEPS_PER_RUN): the run is
 * full. Nothing is written; `limit` is the cap. Thrown by core's intake (the API and `recordCallerIntent`).
 */
export class StepLimitError extends SagaError {
  readonly code = ErrorCode.STEP_LIMIT;
  override readonly httpStatus = 409;
  readonly field = 'stepIdx';
  constructor(
    readonly runId: string,
    readonly limit: number,
  ) {
    super(
      `stepIdx: run ${runId} holds its ${limit} steps (SAGA_MAX_STEPS_PER_RUN); it takes no new step, ` +
        'only retries of its own; start another run',
    );
  }

  override httpFields() {
    return { field: this.field, limit: this.limit };
  }
}

export class NotFoundError extends SagaError {
  readonly code = ErrorCode.NOT_FOUND;
  override readonly httpStatus = 404;
}

/** The database was migrated by a version this code does not know, or not migrated at all. */
export class SchemaVersionMismatchError extends SagaError {
  readonly code = ErrorCode.SCHEMA_VERSION_MISMATCH;
  constructor(
    readonly expected: string,
    readonly found: string | null,
  ) {
    super(
      found === null
        ? `the saga schema is not migrated (expected ${expected}); run \`agent-saga migrate\``
        : `the saga schema is at ${found} but this build knows ${expected}; ` +
            (found > expected ? 'deploy a newer build' : 'run `agent-saga migrate`'),
    );
  }
}

/** Configuration from the environment is missing or malformed. */
export class ConfigError extends SagaError {
  readonly code = ErrorCode.CONFIG;
}

/**
 * A dependency (Postgres, Redis) did not answer within the bound the caller set (`withinMs`). Nothing is
 * known of the operation: the caller falls back (the outbox keeps the row, a sweep runs again).
 */
export class WaitTimeoutError extends SagaError {
  readonly code = ErrorCode.WAIT_TIMEOUT;
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super(`${what}: no answer within ${timeoutMs} ms`);
  }
}

/** A compare-and-set on a run found it in a status that may not move to the target. */
export class InvalidRunTransitionError extends SagaError {
  readonly code = ErrorCode.INVALID_RUN_TRANSITION;
  constructor(
    readonly runId: string,
    readonly from: string | null,
    readonly to: string,
  ) {
    super(`run ${runId}: ${from ?? '(missing)'} → ${to} is not a legal transition`);
  }
}

/** The token's role may not do this (an agent token deciding an approval, resolving a case, …). */
export class ForbiddenError extends SagaError {
  readonly code = ErrorCode.FORBIDDEN;
  override readonly httpStatus = 403;
}

/** The run's policy `requirePivot` refuses irreversible calls outside a pivot. */
export class PivotRequiredError extends SagaError {
  readonly code = ErrorCode.PIVOT_REQUIRED;
  override readonly httpStatus = 409;
  constructor(
    readonly tool: string,
    why: string,
  ) {
    super(
      `${tool} needs a human before the call (${why}) and this run requires a pivot: ` +
        'propose it as a commit step of POST /v1/runs/{runId}/pivot',
    );
  }

  override httpFields() {
    return { tool: this.tool };
  }
}

/** A pivot is approved (or the run moved past it): after the pivot a run only runs its commit steps. */
export class PivotStagedError extends SagaError {
  readonly code = ErrorCode.PIVOT_STAGED;
  override readonly httpStatus = 409;
  constructor(
    readonly runId: string,
    readonly approvalId: string | null,
  ) {
    super(
      `run ${runId} has an approved pivot; after the pivot it only rolls forward through its approved ` +
        'commit steps and accepts no new side-effecting calls or proposals',
    );
  }

  override httpFields() {
    return { runId: this.runId };
  }
}

/**
 * A change of the tenant's policy floor named the version it read (`ifVersion`) and the floor has moved
 * on (another operator changed it): nothing was changed; read it again and decide on what is there now.
 */
export class PolicyVersionMismatchError extends SagaError {
  readonly code = ErrorCode.POLICY_VERSION_MISMATCH;
  override readonly httpStatus = 409;
  constructor(
    readonly expected: number,
    readonly version: number,
  ) {
    super(
      `the policy floor is at version ${version}, not ${expected}: it changed since it was read; ` +
        'read it again (GET /v1/policy) and set it with ifVersion of what you read',
    );
  }

  override httpFields() {
    return { field: 'ifVersion', expected: this.expected, version: this.version };
  }
}

/** The decision carried a hash of another proposal than the one pending: the proposal changed. */
export class ApprovalHashMismatchError extends SagaError {
  readonly code = ErrorCode.APPROVAL_HASH_MISMATCH;
  override readonly httpStatus = 409;
  constructor(
    readonly approvalId: string,
    readonly hash: string,
  ) {
    super(
      `approval ${approvalId} covers a proposal with another hash than the one decided on; ` +
        're-read the proposal and decide on what will actually execute',
    );
  }

  override httpFields() {
    return { approvalId: this.approvalId };
  }
}

/** The approval (or correction) was decided already: decisions are single use. */
export class ApprovalDecidedError extends SagaError {
  readonly code = ErrorCode.APPROVAL_DECIDED;
  override readonly httpStatus = 409;
  constructor(
    readonly approvalId: string,
    readonly status: string,
  ) {
    super(`${approvalId} is ${status}; a decision is single use`);
  }

  override httpFields() {
    return { status: this.status };
  }
}

/** The approval's deadline passed (its own expiry, or a hold it relies on ran out). */
export class ApprovalExpiredError extends SagaError {
  readonly code = ErrorCode.APPROVAL_EXPIRED;
  override readonly httpStatus = 410;
  constructor(
    readonly approvalId: string,
    readonly expiresAt: Date,
  ) {
    super(`approval ${approvalId} expired at ${expiresAt.toISOString()}; the run needs a new proposal`);
  }

  override httpFields() {
    return { approvalId: this.approvalId, expiresAt: this.expiresAt.toISOString() };
  }
}

/** A case was resolved already, or the action does not fit the case. */
export class CaseActionError extends SagaError {
  readonly code = ErrorCode.CASE_ACTION_REFUSED;
  override readonly httpStatus = 409;
  constructor(
    readonly caseId: string,
    message: string,
  ) {
    super(`case ${caseId}: ${message}`);
  }

  override httpFields() {
    return { caseId: this.caseId };
  }
}

/**
 * A send of this correction has started and is not settled (`sending`: under way, or `unknown`: it may have
 * gone out): it cannot be edited, dismissed or sent again until the lookup by its key settles it.
 * `believableAt`: when a "not found" will be believed (the lookup lag since the send), when known.
 */
export class CorrectionSendingError extends SagaError {
  readonly code = ErrorCode.CORRECTION_SENDING;
  override readonly httpStatus = 409;
  constructor(
    readonly correctionId: string,
    readonly status: string,
    readonly believableAt: Date | null = null,
  ) {
    super(
      `correction ${correctionId} is ${status}: a send has started and is settled only by the email ` +
        `lookup by its key${believableAt ? ` (a "not found" is believed from ${believableAt.toISOString()})` : ''}; read it again later`,
    );
  }

  override httpFields() {
    return {
      correctionId: this.correctionId,
      status: this.status,
      believableAt: this.believableAt?.toISOString() ?? null,
    };
  }
}

/** A compare-and-set on a correction found it in another state than the move allows (it moved meanwhile). */
export class InvalidCorrectionTransitionError extends SagaError {
  readonly code = ErrorCode.INVALID_CORRECTION_TRANSITION;
  /** A refusal, unlike the other transitions' errors: the correction moved meanwhile; read it again. */
  override readonly httpStatus = 409;
  constructor(
    readonly correctionId: string,
    readonly from: string | null,
    readonly to: string,
  ) {
    super(`correction ${correctionId}: ${from ?? '(missing)'} → ${to} is not a legal transition now`);
  }

  override httpFields() {
    return { correctionId: this.correctionId, status: this.from };
  }
}

/** A compare-and-set on an approval found it in a status that may not move to the target (decided already). */
export class InvalidApprovalTransitionError extends SagaError {
  readonly code = ErrorCode.INVALID_APPROVAL_TRANSITION;
  constructor(
    readonly approvalId: string,
    readonly from: string | null,
    readonly to: string,
  ) {
    super(`approval ${approvalId}: ${from ?? '(missing)'} → ${to} is not a legal transition`);
  }
}

/** A compare-and-set on a case found it in a status that may not move to the target (resolved already). */
export class InvalidCaseTransitionError extends SagaError {
  readonly code = ErrorCode.INVALID_CASE_TRANSITION;
  constructor(
    readonly caseId: string,
    readonly from: string | null,
    readonly to: string,
  ) {
    super(`case ${caseId}: ${from ?? '(missing)'} → ${to} is not a legal transition`);
  }
}

/**
 * A bound run was not ended because its definition's invariant could not be checked: a lookup did not
 * answer, this process cannot check it, or the steps changed between the check and the ending
 * transaction. Nothing moved; the caller asks again later (503: the request itself was fine).
 */
export class InvariantUnverifiedError extends SagaError {
  readonly code = ErrorCode.INVARIANT_UNVERIFIED;
  override readonly httpStatus = 503;
  constructor(
    readonly runId: string,
    readonly definition: string,
    readonly why: string,
    /** True when only the check's answer went stale (the steps moved): checking again may end the run. */
    readonly stale = false,
  ) {
    super(`run ${runId} was not ended: the invariant of ${definition} is not verified: ${why}`);
  }

  override httpFields() {
    return { runId: this.runId, definition: this.definition };
  }
}
