import { defineTool } from '@agent-saga/core';
import { z } from 'zod';
import { callStripe, postOptions } from './call-stripe.js';
import { lookupPaymentIntentByMetadata } from './lookup-payment-intent.js';
import { isCharged, paymentIntentEffect } from './payment-intent-effect.js';
import { moneyOf, paymentIntentId } from './payment-args.js';
import { markerMetadataKey } from './saga-metadata.js';
import { chargedPaymentPrecondition } from './charged-payment-precondition.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

export const capturePaymentArgs = z.object({
  /** The PaymentIntent that `authorize_payment` returned (its `externalRef`). */
  paymentIntent: paymentIntentId,
});

/**
 * `capture_payment`: takes the money an authorization holds. A capture creates no object of its own, so its
 * key goes into the PaymentIntent's metadata under a per-key marker ({@link markerMetadataKey}), written by
 * the capture request itself (capture accepts `metadata`): the marker exists if and only if the capture
 * happened, and the lookup searches for it. Compensated by a `refund` of that PaymentIntent (its id is an
 * argument, so no `ref` is needed).
 */
export function createCapturePaymentTool(deps: StripeToolDeps) {
  return defineTool({
    name: 'capture_payment',
    description: 'Takes the money held by an authorize_payment hold. Refunded if the run is undone.',
    class: 'compensatable',
    version: 1,
    args: capturePaymentArgs,
    identity: ['paymentIntent'],
    // Captures what the authorisation holds: its step's amount, when the run authorised it.
    moves: (_args, ctx) => moneyOf(ctx.of),
    audience: ['finance'],
    compensate: (args) => ({ tool: 'refund', args: { payment: args.paymentIntent } }),
    execute: async (args, ctx) => {
      const pi = await callStripe(ctx, () =>
        deps.stripe.paymentIntents.capture(
          args.paymentIntent,
          { metadata: { [markerMetadataKey('capture', ctx.idempotencyKey)]: ctx.idempotencyKey } },
          postOptions(deps.config, ctx.idempotencyKey, ctx),
        ),
      );
      return paymentIntentEffect(pi);
    },
    lookup: (key, ctx) =>
      lookupPaymentIntentByMetadata(deps, ctx, markerMetadataKey('capture', key), key, isCharged),
    precondition: (forward, ctx) => chargedPaymentPrecondition(deps, forward, ctx),
    // Every POST carries the step's key as Stripe's Idempotency-Key: a re-send makes no second effect.
    dedupesByKey: true,
    lookupLagMs: deps.config.lookupLagMs,
    timeoutMs: deps.config.timeoutMs,
  });
}
