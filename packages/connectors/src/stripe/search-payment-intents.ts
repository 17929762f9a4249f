import type Stripe from 'stripe';
import { callStripe, getOptions, type CallContext } from './call-stripe.js';
import type { StripeConfig } from './stripe-config.js';
import type { StripeClient } from './stripe-client.js';

/** Why 100: Stripe's maximum page size. */
const PAGE_SIZE = 100;
/**
 * Why 5 pages: one key should match one PaymentIntent; more is a duplicate-effect incident already. Past
 * 500 matches something else is wrong, and we stop rather than page forever.
 */
const MAX_PAGES = 5;

/** Quotes a value for Stripe's search language (single quotes; backslash escapes). */
function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * PaymentIntents whose `metadata[field]` equals `value`, oldest first. Search lags behind writes (up to a
 * minute on Stripe): an empty answer means "not yet visible" until the tool's `lookupLagMs` has passed.
 * Search results may also be stale, so callers re-read each hit with a retrieve before judging its status.
 */
export async function searchPaymentIntentsByMetadata(
  stripe: StripeClient,
  config: StripeConfig,
  ctx: CallContext,
  field: string,
  value: string,
): Promise<Stripe.PaymentIntent[]> {
  const query = `metadata[${quote(field)}]:${quote(value)}`;
  const found: Stripe.PaymentIntent[] = [];
  let page: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const result = await callStripe(ctx, () =>
      stripe.paymentIntents.search(
        { query, limit: PAGE_SIZE, ...(page !== undefined ? { page } : {}) },
        getOptions(config, ctx),
      ),
    );
    found.push(...result.data);
    if (!result.has_more || result.next_page === null) break;
    page = result.next_page;
  }
  // Search answers newest first; the oldest is the effect a keyed replay would have returned.
  return found.reverse();
}

/** Re-reads a PaymentIntent (consistent at once), with its latest charge expanded. */
export function retrievePaymentIntent(
  stripe: StripeClient,
  config: StripeConfig,
  ctx: CallContext,
  id: string,
): Promise<Stripe.PaymentIntent> {
  return callStripe(ctx, () =>
    stripe.paymentIntents.retrieve(id, { expand: ['latest_charge'] }, getOptions(config, ctx)),
  );
}
