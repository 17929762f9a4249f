import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createVendorApp, type VendorAppDeps } from '../http/create-vendor-app.js';
import type { IdempotencyStore } from '../idempotency/idempotency-store.js';
import { installIdempotency, type IdempotencyRefusal } from '../idempotency/install-idempotency.js';
import { Vendor } from '../vendors.js';
import { registerShipmentRoutes } from './shipment-routes.js';
import { ShippingApiError } from './shipping-error.js';
import type { ShippingState } from './shipping-state.js';

export interface ShippingAppDeps extends VendorAppDeps {
  readonly state: ShippingState;
  readonly idempotency: IdempotencyStore;
  readonly apiKey: string;
}

function authHook(apiKey: string) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.headers.authorization === `Bearer ${apiKey}`) return;
    return reply
      .code(401)
      .send(new ShippingApiError(401, 'unauthorized', 'A valid Bearer API key is required.').toBody());
  };
}

function refusal(reason: IdempotencyRefusal): ShippingApiError {
  switch (reason) {
    case 'mismatch':
      return new ShippingApiError(
        409,
        'idempotency_key_mismatch',
        'This Idempotency-Key was used with another request body.',
      );
    case 'in_flight':
      return new ShippingApiError(
        409,
        'idempotency_key_in_use',
        'A request with this Idempotency-Key is still being processed.',
      );
    case 'missing':
      return new ShippingApiError(
        400,
        'idempotency_key_required',
        'POST /v1/shipments requires an Idempotency-Key header.',
      );
    case 'invalid':
      return new ShippingApiError(
        400,
        'invalid_idempotency_key',
        'The Idempotency-Key must be 1 to 255 characters.',
      );
    default: {
      const never: never = reason;
      throw new Error(`unknown refusal ${String(never)}`);
    }
  }
}

/**
 * Our warehouse API. `POST /v1/shipments` requires an Idempotency-Key; every answer once processing began
 * (201, and 422 `order_not_eligible`) is saved and replayed with `Idempotent-Replayed: true`; a 400 for a
 * malformed body is not saved. Cancels are idempotent by nature and take no key.
 */
export function createShippingApp(deps: ShippingAppDeps): FastifyInstance {
  return createVendorApp(Vendor.SHIPPING, deps, {
    setup: (app) => {
      app.addHook('onRequest', authHook(deps.apiKey));
      installIdempotency(app, {
        store: deps.idempotency,
        appliesTo: (request) => request.method === 'POST' && request.url.split('?')[0] === '/v1/shipments',
        scopeOf: () => 'account',
        saves: (statusCode) => statusCode === 201 || statusCode === 422,
        keyRequired: true,
        maxKeyLength: 255,
        replayHeader: 'Idempotent-Replayed',
        refuse: (reply, reason) => reply.code(refusal(reason).statusCode).send(refusal(reason).toBody()),
      });
      app.setErrorHandler((error: FastifyError | ShippingApiError, request, reply) => {
        if (error instanceof ShippingApiError) return reply.code(error.statusCode).send(error.toBody());
        if (error.statusCode !== undefined && error.statusCode < 500) {
          return reply.code(400).send(new ShippingApiError(400, 'invalid_request', error.message).toBody());
        }
        request.log.error(error);
        return reply.code(500).send(new ShippingApiError(500, 'internal_error', 'Internal error.').toBody());
      });
      app.setNotFoundHandler((_request, reply) =>
        reply.code(404).send(new ShippingApiError(404, 'not_found', 'No such route.').toBody()),
      );
      registerShipmentRoutes(app, deps.state);
    },
  });
}
