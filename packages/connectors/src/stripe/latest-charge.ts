import type Stripe from 'stripe';

/** The PaymentIntent's latest charge when it was retrieved expanded (`retrievePaymentIntent`), else null. */
export function latestChargeOf(pi: Stripe.PaymentIntent): Stripe.Charge | null {
  return pi.latest_charge !== null && typeof pi.latest_charge === 'object' ? pi.latest_charge : null;
}

/**
 * Whether the charge was given back in full: Stripe's `refunded` (set only by a full refund), or refunds
 * summing to what was captured. The one rule the money tools' preconditions share.
 */
export function refundedInFull(charge: Stripe.Charge): boolean {
  return charge.refunded || (charge.amount_captured > 0 && charge.amount_refunded >= charge.amount_captured);
}
