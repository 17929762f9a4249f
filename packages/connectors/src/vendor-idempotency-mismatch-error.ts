import { ErrorCode, SagaError } from '@agent-saga/core';

/** What the vendor said when it refused our key (kept on the error; the saga log stores status and code). */
export interface VendorIdempotencyMismatchFacts {
  /** Which connector saw it: `stripe`, `email`, `shipping`, `jira`. */
  readonly vendor: string;
  /** The HTTP status of the refusal (Stripe 400, shipping and Resend 409). */
  readonly status?: number | undefined;
  /** The vendor's own code: `idempotency_error`, `idempotency_key_mismatch`, `invalid_idempotent_request`. */
  readonly vendorCode?: string | undefined;
  /** The vendor's request id, when it sends one (Stripe). */
  readonly requestId?: string | undefined;
}

/**
 * The vendor refused our key because it was first used with another request (Stripe's 400
 * `idempotency_error`, shipping's `idempotency_key_mismatch`, Resend's `invalid_idempotent_request`): code
 * `VENDOR_IDEMPOTENCY_MISMATCH`, one class for every connector. Not a `ClientError`: an effect made under
 * this key by the first request may well exist, so the step is UNKNOWN and its lookup decides, never a retry
 * with new parameters. The distinct code makes it loud: the harness sent two different requests under one
 * key, which is a bug (a tool whose request depends on something other than its arguments).
 */
export class VendorIdempotencyMismatchError extends SagaError {
  readonly code = ErrorCode.VENDOR_IDEMPOTENCY_MISMATCH;
  readonly vendor: string;
  readonly status: number | undefined;
  readonly vendorCode: string | undefined;
  readonly requestId: string | undefined;
  constructor(message: string, facts: VendorIdempotencyMismatchFacts, options?: ErrorOptions) {
    super(message, options);
    this.vendor = facts.vendor;
    this.status = facts.status;
    this.vendorCode = facts.vendorCode;
    this.requestId = facts.requestId;
  }
}
