import { ClientError, defineTool, type ToolContext } from '@agent-saga/core';
import type Stripe from 'stripe';
import { z } from 'zod';
import { callStripe, postOptions } from './call-stripe.js';
import { lookupPaymentIntentByMetadata } from './lookup-payment-intent.js';
import { markPaymentIntent } from './mark-payment-intent.js';
import { paymentIntentEffect } from './payment-intent-effect.js';
import { paymentIntentId } from './payment-args.js';
import { markerMetadataKey } from './saga-metadata.js';
import { retrievePaymentIntent } from './search-payment-intents.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

export const cancelAuthorizationArgs = z.object({
  /** The authorized PaymentIntent (a stored `ref` is resolved to its id before the call). */
  authorization: paymentIntentId,
});

/** Why 3: the marker (POST), the cancel (POST), and on "unexpected state" one read of the PaymentIntent. */
const REQUESTS = 3;

const isCanceled = (pi: Stripe.PaymentIntent): boolean => pi.status === 'canceled';

/**
 * `cancel_authorization`: releases a hold (the compensation of `authorize_payment`). Irreversible: a
 * released hold cannot be placed again without the customer.
 *
 * Stripe's cancel accepts no metadata, so the call first marks the PaymentIntent with a per-key metadata
 * entry ({@link markPaymentIntent}), then cancels under the harness's key. The lookup searches for the marker
 * (lagging: `lookupLagMs`) and re-reads the PaymentIntent: marked and canceled → the effect exists; marked
 * and not canceled → the cancel was not made; no marker after the lag → neither was.
 *
 * A PaymentIntent that is already canceled (400 `payment_intent_unexpected_state`) is reported as done: the
 * hold this call must release is released, whoever released it. Any other unexpected state (it was captured)
 * stays a refusal: the hold became a charge, and cancelling cannot undo that.
 */
export function createCancelAuthorizationTool(deps: StripeToolDeps) {
  return defineTool({
    name: 'cancel_authorization',
    description: 'Releases a card hold made by authorize_payment (the undo of authorize_payment).',
    class: 'irreversible',
    version: 1,
    args: cancelAuthorizationArgs,
    identity: ['authorization'],
    audience: ['finance'],
    execute: async (args, ctx) => paymentIntentEffect(await cancel(deps, ctx, args.authorization)),
    lookup: (key, ctx) =>
      lookupPaymentIntentByMetadata(deps, ctx, markerMetadataKey('cancel', key), key, isCanceled),
    // Every POST carries the step's key as Stripe's Idempotency-Key: a re-send makes no second effect.
    dedupesByKey: true,
    lookupLagMs: deps.config.lookupLagMs,
    timeoutMs: REQUESTS * deps.config.timeoutMs,
  });
}

async function cancel(deps: StripeToolDeps, ctx: ToolContext, id: string): Promise<Stripe.PaymentIntent> {
  await markPaymentIntent(deps, ctx, id, 'cancel');
  try {
    return await callStripe(ctx, () =>
      deps.stripe.paymentIntents.cancel(
        id,
        { cancellation_reason: 'abandoned' },
        postOptions(deps.config, ctx.idempotencyKey, ctx),
      ),
    );
  } catch (err) {
    if (!(err instanceof ClientError) || err.details.vendorCode !== 'payment_intent_unexpected_state')
      throw err;
    const pi = await retrievePaymentIntent(deps.stripe, deps.config, ctx, id);
    if (!isCanceled(pi)) throw err;
    ctx.logger.info({ paymentIntent: id }, 'authorization was already released; nothing to cancel');
    return pi;
  }
}
