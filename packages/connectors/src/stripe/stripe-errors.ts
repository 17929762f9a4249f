import { OutcomeUnknownError, SagaError } from '@agent-saga/core';

/** What Stripe told us about a failure, kept on the error so the saga log stores it. */
export interface StripeErrorFacts {
  /** HTTP status, when the answer had one the client could read. */
  readonly status?: number | undefined;
  /** Stripe's `error.code` (`card_declined`, `idempotency_key_in_use`…) or its error type. */
  readonly vendorCode?: string | undefined;
  readonly requestId?: string | undefined;
}

/**
 * Stripe refused a key it had already seen with other parameters (400 `idempotency_error`). An effect made
 * under this key may well exist, so this is not a {@link ClientError}: the step is UNKNOWN and must be
 * settled by lookup, never retried with new parameters. Its own code makes it stand out in the saga log.
 */
export class VendorIdempotencyMismatchError extends SagaError {
  readonly code = 'VENDOR_IDEMPOTENCY_MISMATCH';
  readonly status: number | undefined;
  readonly vendorCode: string | undefined;
  readonly requestId: string | undefined;
  constructor(message: string, facts: StripeErrorFacts, options?: ErrorOptions) {
    super(message, options);
    this.status = facts.status;
    this.vendorCode = facts.vendorCode;
    this.requestId = facts.requestId;
  }
}

/**
 * A Stripe call whose outcome nobody knows: timeout, reset, 5xx, an unreadable body, 409 in flight, an
 * abort. Keeps the status and vendor code, which the executor stores with the UNKNOWN step.
 */
export class StripeOutcomeUnknownError extends OutcomeUnknownError {
  readonly status: number | undefined;
  readonly vendorCode: string | undefined;
  readonly requestId: string | undefined;
  constructor(message: string, facts: StripeErrorFacts = {}, options?: ErrorOptions) {
    super(message, options);
    this.status = facts.status;
    this.vendorCode = facts.vendorCode;
    this.requestId = facts.requestId;
  }
}
