/**
 * Every stable error code of agent-saga, each defined once. A code is a contract: the HTTP answers carry it
 * (`{ error: { code, … } }`, which `@agent-saga/client` maps onto its classes; `packages/client/test/
 * wire-contract.test.ts` checks the two agree), and `saga_log.error.code` keeps it for people and lookups.
 * Every error class takes its `code` from here ({@link SagaError}'s `code` is typed {@link ErrorCode}), and
 * every code written into a row comes from here, so no code is spelled out anywhere else.
 */
export const ErrorCode = {
  // --- refusals the API answers (the class's `httpStatus` says which status) ---
  /** 400: the body, path or query failed its schema. */
  BAD_REQUEST: 'BAD_REQUEST',
  /** 400: the arguments failed the tool's schema (`field`: the first failing argument). */
  INVALID_ARGS: 'INVALID_ARGS',
  /** 400 from the API; also stored on a FAILED step whose tool this executor does not register. */
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  /** 401: no bearer token, or an unknown or revoked one. */
  UNAUTHORIZED: 'UNAUTHORIZED',
  /** 403: the token's role may not do this. */
  FORBIDDEN: 'FORBIDDEN',
  /** 404: no such run, approval, case or correction for this tenant (or no such route). */
  NOT_FOUND: 'NOT_FOUND',
  /** 409: another tool already holds this step index. */
  STEP_CONFLICT: 'STEP_CONFLICT',
  /** 409: an earlier step is unresolved, or its settled outcome was not yet seen by the caller. */
  STEP_UNRESOLVED: 'STEP_UNRESOLVED',
  /** 409: a retry changed an argument that defines the intent (`identity`). */
  IDEMPOTENCY_MISMATCH: 'IDEMPOTENCY_MISMATCH',
  /**
   * 409: a new step repeats the operation of an earlier step of the run that may have taken effect (same
   * tool, same identity values) and the tool is not `repeatable`.
   */
  DUPLICATE_OPERATION: 'DUPLICATE_OPERATION',
  /** 409: the run is not in a status that takes this. */
  RUN_NOT_RUNNING: 'RUN_NOT_RUNNING',
  /** 400: `POST /v1/runs` named a saga definition (or a version of it) the tool module does not declare. */
  UNKNOWN_DEFINITION: 'UNKNOWN_DEFINITION',
  /** 400: a run's plan does not fit its definition (`field`: the entry, `plan[2].step`, `plan[3].args.amount`). */
  PLAN_INVALID: 'PLAN_INVALID',
  /** 409: a call on a run bound to a definition names a tool the definition does not allow; nothing written. */
  NOT_IN_DEFINITION: 'NOT_IN_DEFINITION',
  /** 409: a call on a run with a plan differs from the planned entry in its identity arguments (`field`). */
  PLAN_MISMATCH: 'PLAN_MISMATCH',
  /** 409: the call would pass the run's budget (`field`: `budget.maxSteps`, `budget.maxAmount.usd`, …). */
  BUDGET_EXCEEDED: 'BUDGET_EXCEEDED',
  /**
   * 409: the run holds as many steps as it may (SAGA_MAX_STEPS_PER_RUN): a new step at its cursor is refused,
   * nothing written (`field` `stepIdx`, `limit`). Retries of its steps still answer.
   */
  STEP_LIMIT: 'STEP_LIMIT',
  /**
   * 429: the token sent more requests than its rate allows (SAGA_RATE_LIMIT_PER_MINUTE); nothing was done.
   * `retryAfterMs` (and the `Retry-After` header, in seconds) says when one more is allowed.
   */
  RATE_LIMITED: 'RATE_LIMITED',
  /**
   * 409: `PUT /v1/policy` named the version of the tenant's policy floor it read (`ifVersion`) and the floor
   * has another now; nothing was changed (`version`: the current one).
   */
  POLICY_VERSION_MISMATCH: 'POLICY_VERSION_MISMATCH',
  /** 409: a run id another tenant holds. */
  RUN_ID_TAKEN: 'RUN_ID_TAKEN',
  /** 409: the run's policy `requirePivot` refuses an irreversible call outside a pivot. */
  PIVOT_REQUIRED: 'PIVOT_REQUIRED',
  /** 409: the run's pivot is approved; it only rolls forward through its commit steps. */
  PIVOT_STAGED: 'PIVOT_STAGED',
  /** 409: the decision carried the hash of another proposal than the pending one. */
  APPROVAL_HASH_MISMATCH: 'APPROVAL_HASH_MISMATCH',
  /** 409: the approval (or correction) was decided already. */
  APPROVAL_DECIDED: 'APPROVAL_DECIDED',
  /** 410: the approval's deadline passed. */
  APPROVAL_EXPIRED: 'APPROVAL_EXPIRED',
  /** 409: the case is resolved already, or the action does not fit it. */
  CASE_ACTION_REFUSED: 'CASE_ACTION_REFUSED',
  /** 409: a send of the correction has started and is not settled. */
  CORRECTION_SENDING: 'CORRECTION_SENDING',
  /** 409 from the API: the correction moved between the read and the write (a sweep settled it). */
  INVALID_CORRECTION_TRANSITION: 'INVALID_CORRECTION_TRANSITION',
  /** 422: the vendor refused the correction; nothing was sent. */
  CORRECTION_REFUSED: 'CORRECTION_REFUSED',
  /** 502: nobody knows whether the correction went out; the lookup by its key settles it. */
  CORRECTION_OUTCOME_UNKNOWN: 'CORRECTION_OUTCOME_UNKNOWN',
  /** 422 from the API (a pure tool's refusal); stored on a FAILED step: the real system said no. */
  CLIENT_ERROR: 'CLIENT_ERROR',
  /** 502: a pure tool failed otherwise than by a refusal (it only reads; the caller may retry). */
  TOOL_ERROR: 'TOOL_ERROR',
  /**
   * 503: a bound run's business invariant could not be checked (a vendor did not answer) or its answer went
   * stale before the run could end; the run did not move. Ask again later.
   */
  INVARIANT_UNVERIFIED: 'INVARIANT_UNVERIFIED',
  /** 500: the harness failed; the answer hides why (it may name internals) and the request may be retried. */
  INTERNAL: 'INTERNAL',

  // --- outcomes stored on a step (`saga_log.error.code`) ---
  /** The call may or may not have taken effect (5xx, reset, crash): the step is UNKNOWN. */
  OUTCOME_UNKNOWN: 'OUTCOME_UNKNOWN',
  /** The executor's abort signal fired at the tool's timeout: UNKNOWN. */
  TOOL_TIMEOUT: 'TOOL_TIMEOUT',
  /** The executor was shutting down and aborted the call: UNKNOWN. */
  TOOL_ABORTED: 'TOOL_ABORTED',
  /** The tool returned something that is not a `{ externalRef, result }` effect: it ran, so UNKNOWN. */
  BAD_TOOL_RESULT: 'BAD_TOOL_RESULT',
  /** An earlier attempt's lease ran out with the step INTENDED: it may have reached the system, UNKNOWN. */
  LEASE_EXPIRED: 'LEASE_EXPIRED',
  /** The stored arguments fail today's schema of the tool: nothing was sent, FAILED. */
  STORED_ARGS_INVALID: 'STORED_ARGS_INVALID',
  /** The tool's version differs from the one a person approved: nothing was sent, FAILED. */
  APPROVED_VERSION_CHANGED: 'APPROVED_VERSION_CHANGED',
  /** The vendor refused our key, first used with another body: an effect may exist, UNKNOWN. */
  VENDOR_IDEMPOTENCY_MISMATCH: 'VENDOR_IDEMPOTENCY_MISMATCH',

  // --- harness errors: never a refusal, answered 500 INTERNAL if one reaches the API ---
  /** A tool definition is invalid (raised at registration). */
  TOOL_DEFINITION: 'TOOL_DEFINITION',
  /** A saga definition is invalid, or does not fit the tools it is registered with (raised at start). */
  SAGA_DEFINITION: 'SAGA_DEFINITION',
  /** A step's compare-and-set found it in a state that may not move to the target. */
  INVALID_TRANSITION: 'INVALID_TRANSITION',
  /** A run's compare-and-set found it in a status that may not move to the target. */
  INVALID_RUN_TRANSITION: 'INVALID_RUN_TRANSITION',
  /** An approval's compare-and-set found it decided already. */
  INVALID_APPROVAL_TRANSITION: 'INVALID_APPROVAL_TRANSITION',
  /** A case's compare-and-set found it resolved already. */
  INVALID_CASE_TRANSITION: 'INVALID_CASE_TRANSITION',
  /** The database's schema version is not the one this build knows. */
  SCHEMA_VERSION_MISMATCH: 'SCHEMA_VERSION_MISMATCH',
  /** Configuration from the environment is missing or malformed. */
  CONFIG: 'CONFIG',
  /** A dependency (Postgres, Redis) did not answer within the caller's bound. */
  WAIT_TIMEOUT: 'WAIT_TIMEOUT',
  /** The executor's claim failed on a database error before the tool was called (the job is retried). */
  CLAIM_FAILED: 'CLAIM_FAILED',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
