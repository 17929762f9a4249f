/**
 * Errors say what the runtime must do. Each has a stable `code` that the HTTP layer and the client use.
 *
 * - {@link ClientError}: the real system said no; nothing happened. The step is FAILED.
 * - {@link OutcomeUnknownError}: it may have happened. The step is UNKNOWN until a lookup decides.
 * - Everything else is a harness error: refuse the request, change nothing.
 */
export abstract class SagaError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Thrown by a tool when the real system definitively rejected the call: nothing happened. */
export class ClientError extends SagaError {
  readonly code: string = 'CLIENT_ERROR';
  constructor(
    message: string,
    readonly details: { status?: number; vendorCode?: string; [k: string]: unknown } = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The call may or may not have taken effect (timeout, 5xx, reset, abort, crash). */
export class OutcomeUnknownError extends SagaError {
  readonly code = 'OUTCOME_UNKNOWN';
}

/** A tool definition is invalid; raised at registration, before anything runs. */
export class ToolDefinitionError extends SagaError {
  readonly code = 'TOOL_DEFINITION';
  constructor(
    readonly tool: string,
    readonly field: string,
    message: string,
  ) {
    super(`tool ${JSON.stringify(tool)}: ${field}: ${message}`);
  }
}

export class ToolNotRegisteredError extends SagaError {
  readonly code = 'UNKNOWN_TOOL';
  constructor(readonly tool: string) {
    super(`tool ${JSON.stringify(tool)} is not registered`);
  }
}

/** Arguments failed the tool's schema. `field` is the dotted path of the first failing argument. */
export class InvalidArgsError extends SagaError {
  readonly code = 'INVALID_ARGS';
  constructor(
    readonly field: string,
    message: string,
    readonly issues: readonly { field: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/** A compare-and-set on a step found it in a state that may not move to the target. */
export class InvalidTransitionError extends SagaError {
  readonly code = 'INVALID_TRANSITION';
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
  readonly code = 'STEP_CONFLICT';
  constructor(
    readonly stepIdx: number,
    readonly existingTool: string,
    message: string,
  ) {
    super(message);
  }
}

/** An earlier step is unresolved (or its settled outcome was not yet seen by the caller). */
export class StepUnresolvedError extends SagaError {
  readonly code = 'STEP_UNRESOLVED';
  constructor(
    readonly stepIdx: number,
    message: string,
    readonly outcome?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** A retry changed an argument that defines the intent (`identity`). */
export class IdempotencyMismatchError extends SagaError {
  readonly code = 'IDEMPOTENCY_MISMATCH';
  constructor(
    readonly stepIdx: number,
    readonly fields: readonly string[],
  ) {
    super(
      `step ${stepIdx} was called with different identity arguments (${fields.join(', ')}); ` +
        'a retry must describe the same intent; call a new step for a new intent',
    );
  }
}

/**
 * The run is not in a status that takes this: a side-effecting call (by default), or a decision on an
 * approval the run no longer waits for (`refused` names what, e.g. an approval of an unwound run).
 */
export class RunNotRunningError extends SagaError {
  readonly code = 'RUN_NOT_RUNNING';
  constructor(
    readonly runId: string,
    readonly status: string,
    refused = 'accepts no new side-effecting calls',
  ) {
    super(`run ${runId} is ${status} and ${refused}`);
  }
}

export class NotFoundError extends SagaError {
  readonly code = 'NOT_FOUND';
}

/** The database was migrated by a version this code does not know, or not migrated at all. */
export class SchemaVersionMismatchError extends SagaError {
  readonly code = 'SCHEMA_VERSION_MISMATCH';
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
  readonly code = 'CONFIG';
}

/**
 * A dependency (Postgres, Redis) did not answer within the bound the caller set (`withinMs`). Nothing is
 * known of the operation: the caller falls back (the outbox keeps the row, a sweep runs again).
 */
export class WaitTimeoutError extends SagaError {
  readonly code = 'WAIT_TIMEOUT';
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super(`${what}: no answer within ${timeoutMs} ms`);
  }
}

/** A compare-and-set on a run found it in a status that may not move to the target. */
export class InvalidRunTransitionError extends SagaError {
  readonly code = 'INVALID_RUN_TRANSITION';
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
  readonly code = 'FORBIDDEN';
}

/** The run's policy `requirePivot` refuses irreversible calls outside a pivot. */
export class PivotRequiredError extends SagaError {
  readonly code = 'PIVOT_REQUIRED';
  constructor(
    readonly tool: string,
    why: string,
  ) {
    super(
      `${tool} needs a human before the call (${why}) and this run requires a pivot: ` +
        'propose it as a commit step of POST /v1/runs/{runId}/pivot',
    );
  }
}

/** A pivot is approved (or the run moved past it): after the pivot a run only runs its commit steps. */
export class PivotStagedError extends SagaError {
  readonly code = 'PIVOT_STAGED';
  constructor(
    readonly runId: string,
    readonly approvalId: string | null,
  ) {
    super(
      `run ${runId} has an approved pivot; after the pivot it only rolls forward through its approved ` +
        'commit steps and accepts no new side-effecting calls or proposals',
    );
  }
}

/** The decision carried a hash of another proposal than the one pending: the proposal changed. */
export class ApprovalHashMismatchError extends SagaError {
  readonly code = 'APPROVAL_HASH_MISMATCH';
  constructor(
    readonly approvalId: string,
    readonly hash: string,
  ) {
    super(
      `approval ${approvalId} covers a proposal with another hash than the one decided on; ` +
        're-read the proposal and decide on what will actually execute',
    );
  }
}

/** The approval (or correction) was decided already: decisions are single use. */
export class ApprovalDecidedError extends SagaError {
  readonly code = 'APPROVAL_DECIDED';
  constructor(
    readonly approvalId: string,
    readonly status: string,
  ) {
    super(`${approvalId} is ${status}; a decision is single use`);
  }
}

/** The approval's deadline passed (its own expiry, or a hold it relies on ran out). */
export class ApprovalExpiredError extends SagaError {
  readonly code = 'APPROVAL_EXPIRED';
  constructor(
    readonly approvalId: string,
    readonly expiresAt: Date,
  ) {
    super(`approval ${approvalId} expired at ${expiresAt.toISOString()}; the run needs a new proposal`);
  }
}

/** A case was resolved already, or the action does not fit the case. */
export class CaseActionError extends SagaError {
  readonly code = 'CASE_ACTION_REFUSED';
  constructor(
    readonly caseId: string,
    message: string,
  ) {
    super(`case ${caseId}: ${message}`);
  }
}

/**
 * A send of this correction has started and is not settled (`sending`: under way, or `unknown`: it may have
 * gone out): it cannot be edited, dismissed or sent again until the lookup by its key settles it.
 * `believableAt`: when a "not found" will be believed (the lookup lag since the send), when known.
 */
export class CorrectionSendingError extends SagaError {
  readonly code = 'CORRECTION_SENDING';
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
}

/** A compare-and-set on a correction found it in another state than the move allows (it moved meanwhile). */
export class InvalidCorrectionTransitionError extends SagaError {
  readonly code = 'INVALID_CORRECTION_TRANSITION';
  constructor(
    readonly correctionId: string,
    readonly from: string | null,
    readonly to: string,
  ) {
    super(`correction ${correctionId}: ${from ?? '(missing)'} → ${to} is not a legal transition now`);
  }
}

/** A compare-and-set on an approval found it in a status that may not move to the target (decided already). */
export class InvalidApprovalTransitionError extends SagaError {
  readonly code = 'INVALID_APPROVAL_TRANSITION';
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
  readonly code = 'INVALID_CASE_TRANSITION';
  constructor(
    readonly caseId: string,
    readonly from: string | null,
    readonly to: string,
  ) {
    super(`case ${caseId}: ${from ?? '(missing)'} → ${to} is not a legal transition`);
  }
}
