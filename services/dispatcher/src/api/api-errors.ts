import { SagaError } from '@agent-saga/core';

/**
 * Errors that only the HTTP intake raises. Domain errors (StepConflictError, InvalidArgsError, …) come from
 * `@agent-saga/core`; these cover what is about the request itself.
 */

/** No bearer token, or one that is unknown or revoked. */
export class UnauthorizedError extends SagaError {
  readonly code = 'UNAUTHORIZED';
}

/** The body, path or query failed its schema. `field` is the dotted path of the first failing field. */
export class BadRequestError extends SagaError {
  readonly code = 'BAD_REQUEST';
  constructor(
    readonly field: string | undefined,
    message: string,
    readonly issues: readonly { field: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/**
 * A run id another tenant holds. Reported without saying anything about that run, so run ids of other
 * tenants cannot be probed.
 */
export class RunIdTakenError extends SagaError {
  readonly code = 'RUN_ID_TAKEN';
  constructor(readonly runId: string) {
    super(`run id ${JSON.stringify(runId)} cannot be used; choose another`);
  }
}
