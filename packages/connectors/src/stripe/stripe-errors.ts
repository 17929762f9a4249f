import { OutcomeUnknownError } from '@agent-saga/core';

/** What Stripe told us about a failure, kept on the error so the saga log stores it. */
export interface StripeErrorFacts {
  /** HTTP status, when the answer had one the client could read. */
  readonly status?: number | undefined;
  /** Stripe's `error.code` (`card_declined`, `idempotency_key_in_use`…) or its error type. */
  readonly vendorCode?: string | undefined;
  readonly requestId?: string | undefined;
  /**
   * The attempt (`ToolContext.attempt`) whose request Stripe answered: set only when an answer arrived
   * (`status`), so core's lookup rule can tell an answer to the step's last attempt from an older one.
   */
  readonly attempt?: number | undefined;
}

/**
 * A Stripe call whose outcome nobody knows: timeout, reset, 5xx, an unreadable body, 409 in flight, an
 * abort. Keeps the status and vendor code, which the executor stores with the UNKNOWN step.
 */
export class StripeOutcomeUnknownError extends OutcomeUnknownError {
  readonly status: number | undefined;
  readonly vendorCode: string | undefined;
  readonly requestId: string | undefined;
  readonly attempt: number | undefined;
  constructor(message: string, facts: StripeErrorFacts = {}, options?: ErrorOptions) {
    super(message, options);
    this.status = facts.status;
    this.vendorCode = facts.vendorCode;
    this.requestId = facts.requestId;
    this.attempt = facts.attempt;
  }
}
