import { ClientError, type ToolContext } from '@agent-saga/core';
import type Stripe from 'stripe';
import { callStripe, postOptions } from './call-stripe.js';
import { defaultPaymentMethod } from './default-payment-method.js';
import { SAGA_KEY_METADATA } from './saga-metadata.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

export interface OffSessionPayment {
  readonly customerId: string;
  readonly amount: number;
  readonly currency: string;
  readonly reason: string;
  readonly receiptEmail?: string | undefined;
  readonly captureMethod: 'automatic' | 'manual';
}

/**
 * Creates and confirms, in one keyed POST, a PaymentIntent off-session against the customer's default
 * payment method. The harness's key is both the `Idempotency-Key` and `metadata.saga_key`, so a retry
 * replays and a lookup finds the PaymentIntent by search. The currency is lower-cased here, so `USD` and
 * `usd` on two attempts send the same parameters (Stripe compares them under the key).
 *
 * A decline is Stripe's 402 (→ {@link ClientError}). Any other status than the one expected (e.g.
 * `requires_action`, which off-session should never leave) means no money moved: also a refusal.
 */
export async function createOffSessionPayment(
  deps: StripeToolDeps,
  ctx: ToolContext,
  payment: OffSessionPayment,
): Promise<Stripe.PaymentIntent> {
  const paymentMethod = await defaultPaymentMethod(deps, ctx, payment.customerId);
  const params: Stripe.PaymentIntentCreateParams = {
    amount: payment.amount,
    currency: payment.currency.toLowerCase(),
    customer: payment.customerId,
    payment_method: paymentMethod,
    confirm: true,
    off_session: true,
    capture_method: payment.captureMethod,
    description: payment.reason,
    metadata: { [SAGA_KEY_METADATA]: ctx.idempotencyKey },
    ...(payment.receiptEmail !== undefined ? { receipt_email: payment.receiptEmail } : {}),
  };
  const pi = await callStripe(ctx, () =>
    deps.stripe.paymentIntents.create(params, postOptions(deps.config, ctx.idempotencyKey, ctx)),
  );
  const expected = payment.captureMethod === 'manual' ? 'requires_capture' : 'succeeded';
  if (pi.status !== expected && pi.status !== 'processing') throw paymentLeftIncomplete(pi);
  return pi;
}

/**
 * The refusal of a payment whose PaymentIntent Stripe left short of its effect (not confirmed, declined,
 * waiting for an action off-session never takes, canceled): no money moved. Thrown by the call that sees
 * such a PaymentIntent in Stripe's answer, and returned by the lookup that finds one under the key
 * (`refusedUnderKey`), so the step's error reads the same whichever learnt it. A PaymentIntent whose
 * confirmation was declined carries the decline as `last_payment_error`: the refusal is then the one
 * Stripe's 402 answer gave (`classify-stripe-error.ts`: status 402, the error's code, its decline code).
 */
export function paymentLeftIncomplete(
  pi: Pick<Stripe.PaymentIntent, 'id' | 'status' | 'last_payment_error'>,
): ClientError {
  const declined = pi.last_payment_error;
  if (declined?.type === 'card_error')
    return new ClientError(declined.message ?? `Stripe declined PaymentIntent ${pi.id}; no money moved`, {
      status: 402,
      vendorCode: declined.code ?? 'card_error',
      ...(declined.decline_code ? { declineCode: declined.decline_code } : {}),
      paymentIntent: pi.id,
    });
  return new ClientError(`Stripe left PaymentIntent ${pi.id} in ${pi.status}; no money moved`, {
    vendorCode: `payment_intent_${pi.status}`,
    paymentIntent: pi.id,
  });
}
