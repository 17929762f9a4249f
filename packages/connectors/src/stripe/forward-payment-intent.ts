import type { ForwardEffect, LookupContext, PreconditionVerdict } from '@agent-saga/core';
import type Stripe from 'stripe';
import { retrievePaymentIntent } from './search-payment-intents.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

/**
 * The PaymentIntent a forward money step recorded, read live with its latest charge, for that step's
 * precondition; or the verdict when the step recorded none (a person looks). The one opening of the money
 * tools' preconditions (`chargedPaymentPrecondition`, `heldPaymentPrecondition`).
 */
export async function readForwardPaymentIntent(
  deps: StripeToolDeps,
  forward: ForwardEffect,
  ctx: LookupContext,
): Promise<
  { readonly id: string; readonly pi: Stripe.PaymentIntent } | { readonly verdict: PreconditionVerdict }
> {
  const id = forward.externalRef;
  if (id === null) return { verdict: { changed: 'the step recorded no PaymentIntent' } };
  return { id, pi: await retrievePaymentIntent(deps.stripe, deps.config, ctx, id) };
}
