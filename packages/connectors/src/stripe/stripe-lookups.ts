import type { InvariantLookupContext } from '@agent-saga/core';
import type Stripe from 'stripe';
import { callStripe, getOptions } from './call-stripe.js';
import { paymentIntentId } from './payment-args.js';
import { retrievePaymentIntent } from './search-payment-intents.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

/** A PaymentIntent as an invariant reads it: what it took, and what its latest charge gave back. */
export interface ChargeState {
  readonly id: string;
  readonly status: string;
  readonly currency: string;
  /** Minor units received (0 until captured or charged). */
  readonly amountReceived: number;
  /** Minor units refunded on its latest charge, as Stripe counts it. */
  readonly amountRefunded: number;
}

/** A refund of a PaymentIntent. `status`: `pending`, `succeeded`, `failed`, `canceled`, … */
export interface RefundState {
  readonly id: string;
  readonly amount: number;
  readonly status: string | null;
}

/** Why 100 and 10 pages: as the refund lookup's (Stripe's page maximum; far more than one PaymentIntent gets). */
const PAGE_SIZE = 100;
const MAX_PAGES = 10;

/**
 * The Stripe reads a definition's invariant may make, over the tools' own client and config (the same
 * `StripeToolDeps`): `charge(paymentIntentId)` (retrieve, consistent at once) and
 * `refundsOf(paymentIntentId)` (list, consistent at once; never the lagging search). A failed read throws
 * the tools' classified error: the check then decides nothing.
 */
export function createStripeLookups(deps: StripeToolDeps) {
  return Object.freeze({
    async charge(id: string, ctx: InvariantLookupContext): Promise<ChargeState> {
      const pi = await retrievePaymentIntent(deps.stripe, deps.config, ctx, paymentIntentId.parse(id));
      const latest =
        typeof pi.latest_charge === 'object' && pi.latest_charge !== null ? pi.latest_charge : null;
      return {
        id: pi.id,
        status: pi.status,
        currency: pi.currency,
        amountReceived: pi.amount_received,
        amountRefunded: latest?.amount_refunded ?? 0,
      };
    },
    async refundsOf(id: string, ctx: InvariantLookupContext): Promise<readonly RefundState[]> {
      const payment = paymentIntentId.parse(id);
      const out: RefundState[] = [];
      let startingAfter: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const list: Stripe.ApiList<Stripe.Refund> = await callStripe(ctx, () =>
          deps.stripe.refunds.list(
            {
              payment_intent: payment,
              limit: PAGE_SIZE,
              ...(startingAfter !== undefined ? { starting_after: startingAfter } : {}),
            },
            getOptions(deps.config, ctx),
          ),
        );
        out.push(...list.data.map((r) => ({ id: r.id, amount: r.amount, status: r.status })));
        const last = list.data.at(-1);
        if (!list.has_more || last === undefined) return out;
        startingAfter = last.id;
      }
      throw new Error(`PaymentIntent ${payment} has more refunds than ${PAGE_SIZE * MAX_PAGES}; not counted`);
    },
  });
}
