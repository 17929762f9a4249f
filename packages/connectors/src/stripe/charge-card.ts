import { defineTool, ref } from '@agent-saga/core';
import { z } from 'zod';
import { createOffSessionPayment, paymentLeftIncomplete } from './create-off-session-payment.js';
import { lookupPaymentIntentByMetadata } from './lookup-payment-intent.js';
import { isCharged, paymentIntentEffect } from './payment-intent-effect.js';
import { SAGA_KEY_METADATA } from './saga-metadata.js';
import { paymentArgs } from './payment-args.js';
import { chargedPaymentPrecondition } from './charged-payment-precondition.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

export const chargeCardArgs = paymentArgs.extend({
  /** Stripe e-mails a receipt here; the customer then knows of the charge (audience, correction). */
  receiptEmail: z.email().optional(),
});

/** Why 2: the customer's default payment method is read (GET), then the PaymentIntent is created (POST). */
const REQUESTS = 2;

/**
 * `charge_card`: takes money now. A PaymentIntent confirmed off-session against the customer's default
 * payment method; compensated by a `refund` of the PaymentIntent this step creates (`ref(key)`, resolved by
 * the compensator from the log). When a receipt went to the customer, the step also stores a correction
 * note, queued for a human after the refund, never sent automatically.
 */
export function createChargeCardTool(deps: StripeToolDeps) {
  return defineTool({
    name: 'charge_card',
    description:
      "Charges the customer's saved card an amount, in minor units (cents). Refunded if the run is undone.",
    class: 'compensatable',
    version: 1,
    args: chargeCardArgs,
    identity: ['customerId', 'amount', 'currency'],
    // The receipt address is the customer's; the reason is free text a model writes about the customer's
    // case (it becomes the PaymentIntent's description). The customer id is Stripe's pseudonym, not shown
    // as personal: agents need it to act, and it names nobody outside Stripe.
    personal: ['receiptEmail', 'reason'],
    moves: (args) => ({ currency: args.currency, amount: args.amount }),
    audience: (args) => (args.receiptEmail !== undefined ? ['customer'] : ['finance']),
    compensate: (_args, key) => ({ tool: 'refund', args: { payment: ref(key) } }),
    correction: (args) =>
      args.receiptEmail === undefined
        ? null
        : {
            template: 'charge_refunded_note',
            to: args.receiptEmail,
            vars: { amount: args.amount, currency: args.currency, reason: args.reason },
          },
    execute: async (args, ctx) =>
      paymentIntentEffect(await createOffSessionPayment(deps, ctx, { ...args, captureMethod: 'automatic' })),
    lookup: (key, ctx) =>
      lookupPaymentIntentByMetadata(deps, ctx, SAGA_KEY_METADATA, key, isCharged, paymentLeftIncomplete),
    precondition: (forward, ctx) => chargedPaymentPrecondition(deps, forward, ctx),
    // Every POST carries the step's key as Stripe's Idempotency-Key: a re-send makes no second effect.
    dedupesByKey: true,
    lookupLagMs: deps.config.lookupLagMs,
    timeoutMs: REQUESTS * deps.config.timeoutMs,
  });
}
