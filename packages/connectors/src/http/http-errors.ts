import { OutcomeUnknownError } from '@agent-saga/core';

/** What the harness knows of a vendor answer that went wrong: its status and the vendor's error code. */
export interface VendorErrorDetails {
  /** Which connector saw it: `jira`, `email`, `shipping`. */
  readonly vendor: string;
  /** The HTTP status, when an answer arrived. */
  readonly status?: number;
  /** The vendor's own error code (`order_not_eligible`, `concurrent_idempotent_requests`) or the socket's. */
  readonly vendorCode?: string;
  /**
   * The attempt (`ToolContext.attempt`) the answer belongs to: set only when an answer arrived (`status`),
   * so that the lookup rule can tell this attempt's answered 429 from an older one (core's
   * `answered-rate-limit.ts`). Absent for a lookup's request and for a call that got no answer.
   */
  readonly attempt?: number;
  /** The answer's `Retry-After`, in milliseconds (see `retry-after.ts`). */
  readonly retryAfterMs?: number;
}

/**
 * The call may have taken effect: a 5xx, a 409 "still in flight", a 408 or 429, a reset, an abort, an answer
 * that is not what the API documents. The step becomes UNKNOWN (code `OUTCOME_UNKNOWN`) and `status`,
 * `vendorCode`, `attempt` and `retryAfterMs` are stored with it (`classifyToolError` reads those fields).
 */
export class HttpOutcomeUnknownError extends OutcomeUnknownError {
  readonly vendor: string;
  readonly status: number | undefined;
  readonly vendorCode: string | undefined;
  readonly attempt: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, details: VendorErrorDetails, options?: ErrorOptions) {
    super(message, options);
    this.vendor = details.vendor;
    this.status = details.status;
    this.vendorCode = details.vendorCode;
    this.attempt = details.attempt;
    this.retryAfterMs = details.retryAfterMs;
  }
}
