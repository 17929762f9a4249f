import {
  refusedUnderKey,
  type ClientError,
  type LookupContext,
  type RefusedUnderKey,
  type ToolEffect,
} from '@agent-saga/core';
import type Stripe from 'stripe';
import { effectFromMatches } from './effect-from-matches.js';
import { paymentIntentEffect } from './payment-intent-effect.js';
import { retrievePaymentIntent, searchPaymentIntentsByMetadata } from './search-payment-intents.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

/**
 * Finds the PaymentIntent(s) whose `metadata[field]` is `key` and that show the tool's effect
 * (`hasEffect`, judged on a fresh retrieve, since search results may be stale). Null until search shows
 * the write: believe it only after the tool's `lookupLagMs`.
 *
 * `refusal`, for a tool whose call creates the PaymentIntent under the key: when every PaymentIntent found
 * lacks the effect (created but never confirmed, declined), the call ended without it for good — Stripe
 * saved its answer under the key, so a re-send is told the same — and the lookup says so
 * (`refusedUnderKey`: the step is FAILED, not sent again, by core's rule for when a refusal is believed). Without it
 * (a call that only marks an existing PaymentIntent) such a hit is "not found".
 */
export async function lookupPaymentIntentByMetadata(
  { stripe, config }: StripeToolDeps,
  ctx: LookupContext,
  field: string,
  key: string,
  hasEffect: (pi: Stripe.PaymentIntent) => boolean,
  refusal?: (pi: Stripe.PaymentIntent) => ClientError,
): Promise<ToolEffect | RefusedUnderKey | null> {
  const hits = await searchPaymentIntentsByMetadata(stripe, config, ctx, field, key);
  const fresh: Stripe.PaymentIntent[] = [];
  for (const hit of hits) fresh.push(await retrievePaymentIntent(stripe, config, ctx, hit.id));
  const matches = fresh.filter(hasEffect);
  if (matches.length < fresh.length) {
    ctx.logger.info(
      { key, field, without: fresh.filter((pi) => !hasEffect(pi)).map((pi) => [pi.id, pi.status]) },
      'Stripe lookup found PaymentIntents under this key without the effect (declined or canceled)',
    );
  }
  const [incomplete] = fresh;
  if (matches.length === 0 && incomplete !== undefined && refusal)
    return refusedUnderKey(refusal(incomplete));
  return effectFromMatches(matches, paymentIntentEffect, (pi) => pi.id);
}
