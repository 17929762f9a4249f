import { ErrorCode, SagaError } from '@agent-saga/core';

/**
 * The claim of a delivered job failed on a database error (a connection reset, a statement timeout, the
 * server restarting) before it returned a verdict. Thrown only by the claim, which runs before the tool is
 * called: nothing was sent to the real system, so the job may be retried. A claim that committed but whose
 * answer was lost leaves this worker's lease on the step; the retry then finds that lease (`held`) and waits
 * it out, and the step goes the lease-expired way (UNKNOWN, then a lookup): the tool is never run twice.
 */
export class ClaimFailedError extends SagaError {
  readonly code = ErrorCode.CLAIM_FAILED;
  constructor(
    readonly key: string,
    cause: unknown,
  ) {
    super(
      `claim of step ${key} failed before the tool was called: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}
