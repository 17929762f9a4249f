import type { FastifyInstance } from 'fastify';
import { idempotencyKeyOf } from '../idempotency/install-idempotency.js';
import {
  applyMetadata,
  assertKnownParams,
  optionalEnum,
  optionalInteger,
  optionalString,
  type FormParams,
} from './form-params.js';
import { listPage } from './list-page.js';
import { createRefund } from './refunds.js';
import { resourceMissing } from './stripe-error.js';
import type { StripeState } from './stripe-state.js';

const CREATE_PARAMS = [
  'payment_intent',
  'charge',
  'amount',
  'reason',
  'metadata',
  'expand',
  'instructions_email',
];

/** `POST /v1/refunds`, `GET /v1/refunds` (filtered by `payment_intent` or `charge`), `GET /v1/refunds/:id`. */
export function registerRefundRoutes(app: FastifyInstance, state: StripeState): void {
  app.post('/v1/refunds', (request) => {
    const params = (request.body ?? {}) as FormParams;
    assertKnownParams(params, CREATE_PARAMS);
    const refund = createRefund(state, {
      paymentIntent: optionalString(params, 'payment_intent'),
      charge: optionalString(params, 'charge'),
      amount: optionalInteger(params, 'amount'),
      reason: optionalEnum(params, 'reason', ['duplicate', 'fraudulent', 'requested_by_customer']),
      metadata: applyMetadata(params, {}),
    });
    const key = idempotencyKeyOf(request);
    if (key !== undefined) state.createdWithKey.set(refund.id, key);
    return structuredClone(refund);
  });

  app.get('/v1/refunds', (request) => {
    const params = request.query as FormParams;
    const paymentIntent = optionalString(params, 'payment_intent');
    const charge = optionalString(params, 'charge');
    const items = [...state.refunds.values()]
      .reverse()
      .filter(
        (r) =>
          (paymentIntent === undefined || r.payment_intent === paymentIntent) &&
          (charge === undefined || r.charge === charge),
      );
    return listPage(items, params, '/v1/refunds');
  });

  app.get<{ Params: { id: string } }>('/v1/refunds/:id', (request) => {
    const refund = state.refunds.get(request.params.id);
    if (refund === undefined) throw resourceMissing('refund', request.params.id, 'id');
    return structuredClone(refund);
  });

  app.get<{ Params: { id: string } }>('/v1/charges/:id', (request) => {
    const charge = state.charges.get(request.params.id);
    if (charge === undefined) throw resourceMissing('charge', request.params.id, 'charge');
    return structuredClone(charge);
  });
}
