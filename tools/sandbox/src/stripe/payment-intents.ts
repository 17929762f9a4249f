/**
 * The PaymentIntent state machine, as Stripe documents it for cards:
 *
 * - `requires_payment_method`: created without a payment method, or the last confirmation was declined.
 *   Exits: `requires_confirmation` (a payment method is attached), confirmation, `canceled`.
 * - `requires_confirmation`: has a payment method, not confirmed. Exits: confirmation, `canceled`.
 * - confirmation: `succeeded` (automatic capture), `requires_capture` (manual capture: the amount is held),
 *   or back to `requires_payment_method` with `last_payment_error` (declined: 402 card_error).
 * - `requires_capture`: exits `succeeded` (capture) or `canceled` (the hold is released).
 * - `succeeded`, `canceled`: final. Refunds leave a succeeded PaymentIntent succeeded.
 *
 * Every illegal move is a 400 `payment_intent_unexpected_state` naming the current status, with the
 * PaymentIntent in the error body. (`requires_action` and `processing` never occur: test cards here need
 * no 3-D Secure, and cards settle synchronously.)
 */
import { prefixedId, unixSeconds } from '../ids.js';
import { TEST_PAYMENT_METHODS } from './payment-methods.js';
import { resourceMissing, StripeApiError, StripeErrorType } from './stripe-error.js';
import { CaptureMethod, PaymentIntentStatus, type Charge, type PaymentIntent } from './stripe-objects.js';
import type { StripeState } from './stripe-state.js';

export interface NewPaymentIntent {
  readonly amount: number;
  readonly currency: string;
  readonly customer: string | undefined;
  readonly paymentMethod: string | undefined;
  readonly captureMethod: CaptureMethod;
  readonly description: string | undefined;
  readonly receiptEmail: string | undefined;
  readonly metadata: Record<string, string>;
  readonly confirm: boolean;
}

const CANCELABLE: readonly PaymentIntentStatus[] = [
  PaymentIntentStatus.REQUIRES_PAYMENT_METHOD,
  PaymentIntentStatus.REQUIRES_CAPTURE,
  PaymentIntentStatus.REQUIRES_CONFIRMATION,
  PaymentIntentStatus.REQUIRES_ACTION,
  PaymentIntentStatus.PROCESSING,
];
const CONFIRMABLE: readonly PaymentIntentStatus[] = [
  PaymentIntentStatus.REQUIRES_PAYMENT_METHOD,
  PaymentIntentStatus.REQUIRES_CONFIRMATION,
  PaymentIntentStatus.REQUIRES_ACTION,
];
const CAPTURABLE: readonly PaymentIntentStatus[] = [PaymentIntentStatus.REQUIRES_CAPTURE];

/** Creates a PaymentIntent and, with `confirm`, confirms it in the same call. */
export function createPaymentIntent(state: StripeState, input: NewPaymentIntent): PaymentIntent {
  if (input.customer !== undefined && !state.customers.has(input.customer)) {
    throw resourceMissing('customer', input.customer, 'customer');
  }
  if (input.paymentMethod !== undefined) assertPaymentMethodExists(input.paymentMethod);
  const id = prefixedId('pi');
  const pi: PaymentIntent = {
    id,
    object: 'payment_intent',
    amount: input.amount,
    amount_capturable: 0,
    amount_received: 0,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: input.captureMethod,
    client_secret: `${id}_secret_${prefixedId('s').slice(2)}`,
    confirmation_method: 'automatic',
    created: unixSeconds(),
    currency: input.currency,
    customer: input.customer ?? null,
    description: input.description ?? null,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    metadata: input.metadata,
    next_action: null,
    payment_method: input.paymentMethod ?? null,
    payment_method_types: ['card'],
    receipt_email: input.receiptEmail ?? null,
    setup_future_usage: null,
    statement_descriptor: null,
    status:
      input.paymentMethod === undefined
        ? PaymentIntentStatus.REQUIRES_PAYMENT_METHOD
        : PaymentIntentStatus.REQUIRES_CONFIRMATION,
  };
  state.savePaymentIntent(pi);
  if (input.confirm) confirmPaymentIntent(state, pi, input.paymentMethod);
  return pi;
}

/**
 * Confirms: charges (or, for manual capture, authorizes) the payment method given, else the one attached,
 * else the customer's default. A decline leaves the PaymentIntent in `requires_payment_method` with
 * `last_payment_error`, saves it, then throws the 402 that Stripe answers.
 */
export function confirmPaymentIntent(
  state: StripeState,
  pi: PaymentIntent,
  paymentMethod: string | undefined,
): void {
  assertStatus(pi, CONFIRMABLE, 'confirmed');
  const customerDefault =
    pi.customer === null
      ? null
      : (state.customers.get(pi.customer)?.invoice_settings.default_payment_method ?? null);
  const pmId = paymentMethod ?? pi.payment_method ?? customerDefault;
  if (pmId === null) {
    throw new StripeApiError(
      400,
      StripeErrorType.INVALID_REQUEST,
      "You cannot confirm this PaymentIntent because it's missing a payment method. To confirm the PaymentIntent with " +
        `${pi.customer ?? 'a customer'}, specify a payment method attached to this customer along with the customer ID.`,
      { code: 'payment_intent_unexpected_state', extra: { payment_intent: structuredClone(pi) } },
    );
  }
  const pm = assertPaymentMethodExists(pmId);
  pi.payment_method = pmId;
  if (pm.decline !== undefined) {
    pi.status = PaymentIntentStatus.REQUIRES_PAYMENT_METHOD;
    pi.last_payment_error = {
      type: 'card_error',
      code: pm.decline.code,
      decline_code: pm.decline.declineCode,
      message: pm.decline.message,
      payment_method: { id: pmId, object: 'payment_method', type: 'card' },
    };
    state.savePaymentIntent(pi);
    throw new StripeApiError(402, StripeErrorType.CARD, pm.decline.message, {
      code: pm.decline.code,
      declineCode: pm.decline.declineCode,
      extra: { payment_intent: structuredClone(pi), payment_method: pi.last_payment_error.payment_method },
    });
  }
  const manual = pi.capture_method === CaptureMethod.MANUAL;
  const charge: Charge = {
    id: prefixedId('ch'),
    object: 'charge',
    amount: pi.amount,
    amount_captured: manual ? 0 : pi.amount,
    amount_refunded: 0,
    captured: !manual,
    created: unixSeconds(),
    currency: pi.currency,
    customer: pi.customer,
    description: pi.description,
    livemode: false,
    metadata: {},
    paid: true,
    payment_intent: pi.id,
    payment_method: pmId,
    receipt_email: pi.receipt_email,
    refunded: false,
    status: 'succeeded',
  };
  state.charges.set(charge.id, charge);
  pi.latest_charge = charge.id;
  pi.last_payment_error = null;
  if (manual) {
    pi.status = PaymentIntentStatus.REQUIRES_CAPTURE;
    pi.amount_capturable = pi.amount;
  } else {
    pi.status = PaymentIntentStatus.SUCCEEDED;
    pi.amount_received = pi.amount;
  }
  state.savePaymentIntent(pi);
}

/** Captures a held amount (all of it unless `amountToCapture`); the rest of the hold is released. */
export function capturePaymentIntent(
  state: StripeState,
  pi: PaymentIntent,
  amountToCapture: number | undefined,
): void {
  assertStatus(pi, CAPTURABLE, 'captured');
  const amount = amountToCapture ?? pi.amount_capturable;
  if (amount <= 0 || amount > pi.amount_capturable) {
    throw new StripeApiError(
      400,
      StripeErrorType.INVALID_REQUEST,
      `The amount to capture (${amount}) must be positive and at most the amount capturable (${pi.amount_capturable}).`,
      { code: 'amount_too_large', param: 'amount_to_capture', saved: false },
    );
  }
  pi.status = PaymentIntentStatus.SUCCEEDED;
  pi.amount_received = amount;
  pi.amount_capturable = 0;
  const charge = pi.latest_charge === null ? undefined : state.charges.get(pi.latest_charge);
  if (charge !== undefined) {
    charge.captured = true;
    charge.amount_captured = amount;
  }
  state.savePaymentIntent(pi);
}

/** Cancels; on a held PaymentIntent this releases the hold (no charge and refund pair on a statement). */
export function cancelPaymentIntent(state: StripeState, pi: PaymentIntent, reason: string | undefined): void {
  assertStatus(pi, CANCELABLE, 'canceled');
  pi.status = PaymentIntentStatus.CANCELED;
  pi.canceled_at = unixSeconds();
  pi.cancellation_reason = reason ?? null;
  pi.amount_capturable = 0;
  state.savePaymentIntent(pi);
}

export function getPaymentIntent(state: StripeState, id: string): PaymentIntent {
  const pi = state.paymentIntents.get(id);
  if (pi === undefined) throw resourceMissing('payment_intent', id, 'intent');
  return pi;
}

function assertStatus(pi: PaymentIntent, allowed: readonly PaymentIntentStatus[], past: string): void {
  if (allowed.includes(pi.status)) return;
  throw new StripeApiError(
    400,
    StripeErrorType.INVALID_REQUEST,
    `This PaymentIntent could not be ${past} because it has a status of ${pi.status}. ` +
      `Only a PaymentIntent with one of the following statuses may be ${past}: ${allowed.join(', ')}.`,
    { code: 'payment_intent_unexpected_state', extra: { payment_intent: structuredClone(pi) } },
  );
}

function assertPaymentMethodExists(id: string) {
  const pm = TEST_PAYMENT_METHODS.get(id);
  if (pm === undefined) throw resourceMissing('PaymentMethod', id, 'payment_method');
  return pm;
}
