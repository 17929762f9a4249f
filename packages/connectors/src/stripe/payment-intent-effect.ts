import type { ToolEffect } from '@agent-saga/core';
import type Stripe from 'stripe';

/** What a PaymentIntent tool stores as its result: enough to explain the step, nothing secret. */
export interface PaymentIntentResult {
  readonly paymentIntent: string;
  readonly status: Stripe.PaymentIntent.Status;
  readonly amount: number;
  readonly amountReceived: number;
  readonly amountCapturable: number;
  readonly currency: string;
  readonly customer: string | null;
}

export function paymentIntentEffect(pi: Stripe.PaymentIntent): ToolEffect<PaymentIntentResult> {
  return {
    externalRef: pi.id,
    result: {
      paymentIntent: pi.id,
      status: pi.status,
      amount: pi.amount,
      amountReceived: pi.amount_received,
      amountCapturable: pi.amount_capturable,
      currency: pi.currency,
      customer: typeof pi.customer === 'string' ? pi.customer : (pi.customer?.id ?? null),
    },
  };
}

/** Money was taken (or is being taken): the effect of a charge or a capture. */
export function isCharged(pi: Stripe.PaymentIntent): boolean {
  return pi.status === 'succeeded' || pi.status === 'processing';
}

/**
 * A hold was placed at some point: the effect of an authorization, even if it was captured or released
 * since. A canceled PaymentIntent counts only when its charge had succeeded (an uncaptured authorization),
 * not when it was canceled after a decline.
 */
export function wasAuthorized(pi: Stripe.PaymentIntent): boolean {
  if (pi.status === 'requires_capture' || isCharged(pi)) return true;
  if (pi.status !== 'canceled') return false;
  const charge = pi.latest_charge;
  return charge !== null && typeof charge === 'object' && charge.status === 'succeeded';
}
