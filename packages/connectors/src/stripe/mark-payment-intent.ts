import type { ToolContext } from '@agent-saga/core';
import { callStripe, postOptions } from './call-stripe.js';
import { markerIdempotencyKey, markerMetadataKey, type MarkerKind } from './saga-metadata.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

/**
 * Writes the call's marker into the PaymentIntent's metadata before the call's effect (a refund, a cancel)
 * is requested. Stripe has no search for refunds and a cancel accepts no metadata; the marker is what lets
 * a lookup, given only the key, find the PaymentIntent again, then read its consistent state.
 *
 * Sent under a key derived from the harness's key ({@link markerIdempotencyKey}): Stripe refuses one key on
 * two endpoints, and the effect's own POST must carry the harness's key unchanged. The update is harmless
 * on its own (metadata only) and replays on a retry.
 */
export async function markPaymentIntent(
  deps: StripeToolDeps,
  ctx: ToolContext,
  paymentIntent: string,
  kind: MarkerKind,
): Promise<void> {
  const key = ctx.idempotencyKey;
  await callStripe(ctx, () =>
    deps.stripe.paymentIntents.update(
      paymentIntent,
      { metadata: { [markerMetadataKey(kind, key)]: key } },
      postOptions(deps.config, markerIdempotencyKey(key), ctx),
    ),
  );
}
