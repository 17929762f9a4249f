import { ClientError, SagaError, type Logger } from '@agent-saga/core';
import Stripe from 'stripe';
import { VendorIdempotencyMismatchError } from '../vendor-idempotency-mismatch-error.js';
import { StripeOutcomeUnknownError, type StripeErrorFacts } from './stripe-errors.js';

/**
 * Statuses at which Stripe, answering with its own error body, has definitively refused the request:
 * 400 invalid request (a bad parameter, `amount_too_large`, `payment_intent_unexpected_state`), 402 card
 * declined, 404 no such object. Nothing happened, so the step is FAILED.
 */
const DEFINITIVE_REFUSALS: ReadonlySet<number> = new Set([400, 402, 404]);
/** The key is wrong or lacks a permission: nothing happened, but an operator must hear about it. */
const AUTH_REFUSALS: ReadonlySet<number> = new Set([401, 403]);
/** Error classes that carry a Stripe error body for a request Stripe refused. */
const REFUSAL_TYPES: ReadonlySet<string> = new Set(['StripeCardError', 'StripeInvalidRequestError']);

/**
 * Maps whatever a Stripe call threw onto what the runtime must do. The one place that decides it:
 *
 * - `idempotency_error` (this key was used with other parameters) → {@link VendorIdempotencyMismatchError},
 *   UNKNOWN and logged at error level: an effect under this key may exist; never retry with new parameters.
 * - 409 (`idempotency_key_in_use`: the first request with this key is still running) → UNKNOWN.
 * - 401/403 with Stripe's body → {@link ClientError} (nothing happened), logged at error level.
 * - 400/402/404 card or invalid-request errors → {@link ClientError} with `{ status, vendorCode }`.
 * - Everything else — connection errors, the client's timeout, 429, 5xx, a body the client could not read
 *   (a gateway's HTML 504 surfaces as `StripeAPIError` "Invalid JSON" with no status) — → UNKNOWN, keeping
 *   whatever status was seen. 429 is deliberately here: Stripe did not process it, but treating it as FAILED
 *   would tell the agent its intent was refused; as UNKNOWN the lookup settles it as not executed. The
 *   error carries no `attempt`, so core's shortcut for an answered 429 (`answered-rate-limit.ts`) does not
 *   apply, and need not: Stripe's tools keep the default commit horizon (their timeout), which is what
 *   the shortcut would wait anyway, and a re-send carries the same Idempotency-Key.
 *
 * A {@link SagaError} thrown by the connector itself passes through unchanged.
 */
export function classifyStripeError(err: unknown, logger: Logger): SagaError {
  if (err instanceof SagaError) return err;
  if (!(err instanceof Stripe.errors.StripeError)) {
    const message = err instanceof Error ? err.message : String(err);
    return new StripeOutcomeUnknownError(`Stripe call failed: ${message}`, {}, { cause: err });
  }
  const facts: StripeErrorFacts = {
    status: err.statusCode,
    vendorCode: err.code ?? err.rawType,
    requestId: err.requestId,
  };
  const status = err.statusCode;
  const log = { status, vendorCode: facts.vendorCode, requestId: facts.requestId, type: err.type };

  if (err.type === 'StripeIdempotencyError' || err.rawType === 'idempotency_error') {
    logger.error(log, 'Stripe refused our idempotency key: it was used before with other parameters');
    return new VendorIdempotencyMismatchError(
      `Stripe idempotency_error: this key was already used with other parameters (${err.message})`,
      { ...facts, vendor: 'stripe', vendorCode: facts.vendorCode ?? 'idempotency_error' },
      { cause: err },
    );
  }
  if (status === 409) {
    logger.warn(log, 'Stripe answered 409: another request with this key is still in flight');
    return new StripeOutcomeUnknownError(`Stripe 409: ${err.message}`, facts, { cause: err });
  }
  if (status !== undefined && AUTH_REFUSALS.has(status)) {
    logger.error(log, 'Stripe refused our credentials: check STRIPE_SECRET_KEY and its permissions');
    return new ClientError(err.message, clientDetails(err, facts), { cause: err });
  }
  if (status !== undefined && DEFINITIVE_REFUSALS.has(status) && REFUSAL_TYPES.has(err.type)) {
    return new ClientError(err.message, clientDetails(err, facts), { cause: err });
  }
  logger.warn(log, 'Stripe call ended without a definitive answer');
  return new StripeOutcomeUnknownError(`Stripe outcome unknown: ${err.message}`, facts, { cause: err });
}

function clientDetails(err: Stripe.errors.StripeError, facts: StripeErrorFacts): ClientError['details'] {
  return {
    status: facts.status,
    vendorCode: facts.vendorCode,
    ...(err.decline_code ? { declineCode: err.decline_code } : {}),
    ...(err.param !== undefined ? { param: err.param } : {}),
    ...(facts.requestId !== undefined ? { requestId: facts.requestId } : {}),
  };
}
