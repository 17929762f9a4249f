import { defineTool, ref } from '@agent-saga/core';
import { createOffSessionPayment, paymentLeftIncomplete } from './create-off-session-payment.js';
import { heldPaymentPrecondition } from './held-payment-precondition.js';
import { lookupPaymentIntentByMetadata } from './lookup-payment-intent.js';
import { paymentIntentEffect, wasAuthorized } from './payment-intent-effect.js';
import { paymentArgs } from './payment-args.js';
import { SAGA_KEY_METADATA } from './saga-metadata.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

/** Why 2: the customer's default payment method is read (GET), then the PaymentIntent is created (POST). */
const REQUESTS = 2;

/**
 * `authorize_payment`: places a hold (a PaymentIntent with `capture_method: manual`, confirmed off-session).
 * Compensated by `cancel_authorization`, which releases the hold: the statement never shows a charge and a
 * refund; unless the hold is gone already (released, or captured and that charge refunded in full: its
 * precondition, `heldPaymentPrecondition`). Its lookup counts a PaymentIntent that was authorized at some point, even if since captured or
 * released, because the step's effect did happen.
 */
export function createAuthorizePaymentTool(deps: StripeToolDeps) {
  return defineTool({
    name: 'authorize_payment',
    description:
      "Places a hold on the customer's card for an amount, in minor units (cents), without taking the money; capture_payment takes it.",
    class: 'compensatable',
    version: 1,
    args: paymentArgs,
    identity: ['customerId', 'amount', 'currency'],
    // Free text about the customer's case, as for charge_card; the rest are ids and amounts.
    personal: ['reason'],
    audience: ['finance'],
    compensate: (_args, key) => ({ tool: 'cancel_authorization', args: { authorization: ref(key) } }),
    // Read before the release: a hold captured and refunded in full (the capture undone first) needs none.
    precondition: (forward, ctx) => heldPaymentPrecondition(deps, forward, ctx),
    execute: async (args, ctx) =>
      paymentIntentEffect(await createOffSessionPayment(deps, ctx, { ...args, captureMethod: 'manual' })),
    lookup: (key, ctx) =>
      lookupPaymentIntentByMetadata(deps, ctx, SAGA_KEY_METADATA, key, wasAuthorized, paymentLeftIncomplete),
    // Every POST carries the step's key as Stripe's Idempotency-Key: a re-send makes no second effect.
    dedupesByKey: true,
    lookupLagMs: deps.config.lookupLagMs,
    timeoutMs: REQUESTS * deps.config.timeoutMs,
    holdWindowMs: deps.config.holdWindowMs,
  });
}
