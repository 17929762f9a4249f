import { defineTool, type LookupContext, type ToolEffect } from '@agent-saga/core';
import type Stripe from 'stripe';
import { z } from 'zod';
import { callStripe, getOptions, postOptions } from './call-stripe.js';
import { effectFromMatches } from './effect-from-matches.js';
import { markPaymentIntent } from './mark-payment-intent.js';
import { moneyOf, paymentIntentId } from './payment-args.js';
import { markerMetadataKey, SAGA_KEY_METADATA } from './saga-metadata.js';
import { searchPaymentIntentsByMetadata } from './search-payment-intents.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

export const refundArgs = z.object({
  /** The PaymentIntent to refund (a stored `ref` is resolved to its id before the call). */
  payment: paymentIntentId,
  /** Minor units; default all that is left. */
  amount: z.number().int().positive().optional(),
});

export interface RefundResult {
  readonly refund: string;
  readonly paymentIntent: string;
  readonly amount: number;
  readonly status: string | null;
}

/** Why 2: the marker on the PaymentIntent (POST), then the refund (POST). */
const REQUESTS = 2;
/** Why 100: Stripe's maximum page size; why 10 pages: far more refunds than one PaymentIntent ever gets. */
const PAGE_SIZE = 100;
const MAX_PAGES = 10;

function refundEffect(refund: Stripe.Refund): ToolEffect<RefundResult> {
  const pi = refund.payment_intent;
  return {
    externalRef: refund.id,
    result: {
      refund: refund.id,
      paymentIntent: typeof pi === 'string' ? pi : (pi?.id ?? ''),
      amount: refund.amount,
      status: refund.status,
    },
  };
}

/**
 * `refund`: gives money back (the compensation of `charge_card` and `capture_payment`, and a tool in its own
 * right). Irreversible: money returned cannot be taken again. The refund carries the harness's key as
 * `Idempotency-Key` and `metadata.saga_key`.
 *
 * Lookup, given only the key. Stripe has no refund search, and the PaymentIntent is not known to a lookup.
 * Rejected: listing the account's recent refunds (`GET /v1/refunds`) and filtering by metadata — on a busy
 * account the refund may fall outside any window we page through, and "not in the window" would be taken
 * for "not executed", inviting a second refund once Stripe has forgotten the key (24 h). Chosen: before
 * refunding, the call marks the PaymentIntent with a per-key metadata entry ({@link markPaymentIntent}).
 * The lookup searches PaymentIntents by that marker (lagging: `lookupLagMs`), then lists that
 * PaymentIntent's refunds (consistent) and keeps those whose `metadata.saga_key` is the key. Marker visible
 * and no such refund: the refund was not made. The cost is one extra POST per refund.
 */
export function createRefundTool(deps: StripeToolDeps) {
  return defineTool({
    name: 'refund',
    description: 'Refunds a payment, in full or an amount in minor units (cents). Cannot be undone.',
    class: 'irreversible',
    version: 1,
    args: refundArgs,
    identity: ['payment', 'amount'],
    // A partial refund moves its amount; a full one what the refunded step charged or captured.
    moves: (args, ctx) => {
      const charged = moneyOf(ctx.of);
      if (args.amount === undefined) return charged;
      return charged ? { currency: charged.currency, amount: args.amount } : null;
    },
    audience: ['finance'],
    execute: async (args, ctx) => {
      await markPaymentIntent(deps, ctx, args.payment, 'refund');
      const refund = await callStripe(ctx, () =>
        deps.stripe.refunds.create(
          {
            payment_intent: args.payment,
            ...(args.amount !== undefined ? { amount: args.amount } : {}),
            metadata: { [SAGA_KEY_METADATA]: ctx.idempotencyKey },
          },
          postOptions(deps.config, ctx.idempotencyKey, ctx),
        ),
      );
      return refundEffect(refund);
    },
    lookup: (key, ctx) => lookupRefund(deps, ctx, key),
    // Every POST carries the step's key as Stripe's Idempotency-Key: a re-send makes no second effect.
    dedupesByKey: true,
    lookupLagMs: deps.config.lookupLagMs,
    timeoutMs: REQUESTS * deps.config.timeoutMs,
  });
}

async function lookupRefund(
  deps: StripeToolDeps,
  ctx: LookupContext,
  key: string,
): Promise<ToolEffect | null> {
  const { stripe, config } = deps;
  const marked = await searchPaymentIntentsByMetadata(
    stripe,
    config,
    ctx,
    markerMetadataKey('refund', key),
    key,
  );
  const matches: Stripe.Refund[] = [];
  for (const pi of marked) {
    let startingAfter: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const list = await callStripe(ctx, () =>
        stripe.refunds.list(
          {
            payment_intent: pi.id,
            limit: PAGE_SIZE,
            ...(startingAfter !== undefined ? { starting_after: startingAfter } : {}),
          },
          getOptions(config, ctx),
        ),
      );
      matches.push(...list.data.filter((r) => r.metadata?.[SAGA_KEY_METADATA] === key));
      const last = list.data.at(-1);
      if (!list.has_more || last === undefined) break;
      startingAfter = last.id;
    }
  }
  // Lists answer newest first; report the oldest as the effect.
  matches.sort((a, b) => a.created - b.created);
  return effectFromMatches(matches, refundEffect, (r) => r.id);
}
