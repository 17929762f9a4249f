import type { FaultSpecInput } from './fault-rule.js';

/**
 * The partial batch on Stripe, in one place for every test that plays it: the next PaymentIntent create
 * runs without its `confirm` (the PaymentIntent is created, never confirmed) and is answered 500 with
 * Stripe's own `api_error` body, which Stripe's idempotency store saves under the key. `extra` narrows it
 * (`contains`, `nth`).
 */
export function stripePartialBatchFault(extra: Partial<FaultSpecInput> = {}): FaultSpecInput {
  return {
    vendor: 'stripe',
    method: 'POST',
    path: '/v1/payment_intents',
    nth: 1,
    kind: 'partial_batch',
    omit: ['confirm'],
    body: { error: { type: 'api_error', message: 'An unexpected error occurred' } },
    ...extra,
  };
}
