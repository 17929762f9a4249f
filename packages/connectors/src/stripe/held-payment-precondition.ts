import type { ForwardEffect, LookupContext, PreconditionVerdict } from '@agent-saga/core';
import { readForwardPaymentIntent } from './forward-payment-intent.js';
import { latestChargeOf, refundedInFull } from './latest-charge.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

/**
 * The precondition of `authorize_payment`, read live before its `cancel_authorization` is sent: the
 * PaymentIntent retrieved with its latest charge and compared with how the step left it, a hold.
 * - still held (`requires_capture`) → `as_left`: release it;
 * - released (`canceled`, by a person or another system) → `already_compensated`;
 * - captured, and the capture's charge refunded in full → `already_compensated`: the hold became a charge
 *   and that charge was given back, so nothing of the hold stands. This is the usual case in an unwind: a
 *   `capture_payment` of the hold depends on it, so the compensator refunds the capture first, and a cancel
 *   sent after that would be refused (Stripe cancels no `succeeded` PaymentIntent) and leave a person a case
 *   about money that is already back (found by `pnpm simulate`, docs/simulation.md);
 * - captured and not refunded in full, or any other status → changed: releasing is no longer possible, and
 *   what the charge needs is a decision for a person.
 * A read that fails throws: nothing is decided, the compensator asks again later.
 */
export async function heldPaymentPrecondition(
  deps: StripeToolDeps,
  forward: ForwardEffect,
  ctx: LookupContext,
): Promise<PreconditionVerdict> {
  const read = await readForwardPaymentIntent(deps, forward, ctx);
  if ('verdict' in read) return read.verdict;
  const { id, pi } = read;
  if (pi.status === 'requires_capture') return 'as_left';
  if (pi.status === 'canceled') return 'already_compensated';
  const charge = latestChargeOf(pi);
  if (pi.status === 'succeeded' && charge !== null) {
    if (refundedInFull(charge)) return 'already_compensated';
    return {
      changed: `the hold on PaymentIntent ${id} was captured (${charge.amount_captured} ${charge.currency}, ${charge.amount_refunded} refunded): it can no longer be released`,
    };
  }
  return { changed: `PaymentIntent ${id} is ${pi.status}, no longer a hold` };
}
