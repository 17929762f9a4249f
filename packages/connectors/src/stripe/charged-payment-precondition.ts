import type { ForwardEffect, LookupContext, PreconditionVerdict } from '@agent-saga/core';
import { readForwardPaymentIntent } from './forward-payment-intent.js';
import { latestChargeOf, refundedInFull } from './latest-charge.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

/**
 * The precondition of a forward step that took money (`charge_card`, `capture_payment`), read live before
 * its `refund` is sent. The PaymentIntent is retrieved with its latest charge (consistent at once, unlike
 * search) and compared with how the step left it: charged, nothing refunded.
 * - nothing refunded, not disputed → `as_left`: refund it;
 * - refunded in full (by a person in the dashboard, by another system) → `already_compensated`: no second
 *   refund, the step is compensated with this evidence;
 * - partly refunded, disputed, or no longer charged → changed: refunding the rest, or over a dispute, is a
 *   decision for a person, not for the harness.
 * A read that fails throws: nothing is decided, the compensator asks again later.
 */
export async function chargedPaymentPrecondition(
  deps: StripeToolDeps,
  forward: ForwardEffect,
  ctx: LookupContext,
): Promise<PreconditionVerdict> {
  const read = await readForwardPaymentIntent(deps, forward, ctx);
  if ('verdict' in read) return read.verdict;
  const { id, pi } = read;
  const charge = latestChargeOf(pi);
  if (charge === null) return { changed: `PaymentIntent ${id} is ${pi.status} and has no charge` };
  if (charge.disputed) return { changed: `the charge ${charge.id} of PaymentIntent ${id} is disputed` };
  if (refundedInFull(charge)) return 'already_compensated';
  if (charge.amount_refunded > 0)
    return {
      changed: `PaymentIntent ${id} was partly refunded elsewhere: ${charge.amount_refunded} of ${charge.amount_captured} ${charge.currency}`,
    };
  if (pi.status !== 'succeeded') return { changed: `PaymentIntent ${id} is ${pi.status}, not charged` };
  return 'as_left';
}
