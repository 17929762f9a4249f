import { LaggedIndex } from '../lagged-index.js';
import type { Charge, Customer, PaymentIntent, Refund } from './stripe-objects.js';

/**
 * Everything the fake Stripe account holds. Maps keep insertion order, so "newest first" is the reverse.
 * `createdWithKey` remembers the Idempotency-Key each object was created under (not on the wire; for the
 * ledger, so a test can check that the harness's key reached Stripe).
 */
export class StripeState {
  readonly customers = new Map<string, Customer>();
  readonly paymentIntents = new Map<string, PaymentIntent>();
  readonly charges = new Map<string, Charge>();
  readonly refunds = new Map<string, Refund>();
  readonly paymentIntentSearch = new LaggedIndex<PaymentIntent>();
  readonly createdWithKey = new Map<string, string>();

  /** Stores a PaymentIntent after any change, and lets the search index see the change later. */
  savePaymentIntent(pi: PaymentIntent): void {
    this.paymentIntents.set(pi.id, pi);
    this.paymentIntentSearch.record(pi.id, structuredClone(pi));
  }

  clear(): void {
    this.customers.clear();
    this.paymentIntents.clear();
    this.charges.clear();
    this.refunds.clear();
    this.paymentIntentSearch.clear();
    this.createdWithKey.clear();
  }
}
