import { ErrorCode, SagaError } from '@agent-saga/core';

/**
 * Errors that only the HTTP intake raises. Domain errors (StepConflictError, InvalidArgsError, …) come from
 * `@agent-saga/core`; these cover what is about the request itself.
 */

/** No bearer token, or one that is unknown or revoked. */
export class UnauthorizedError extends SagaError {
  readonly code = ErrorCode.UNAUTHORIZED;
  override readonly httpStatus = 401;
}

/**
 * A run id another tenant holds. Reported without saying anything about that run, so run ids of other
 * tenants cannot be probed.
 */
export class RunIdTakenError extends SagaError {
  readonly code = ErrorCode.RUN_ID_TAKEN;
  override readonly httpStatus = 409;
  constructor(readonly runId: string) {
    super(`run id ${JSON.stringify(runId)} cannot be used; choose another`);
  }
}
