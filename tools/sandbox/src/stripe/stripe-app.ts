import type { FastifyError, FastifyInstance } from 'fastify';
import { createVendorApp, type VendorAppDeps } from '../http/create-vendor-app.js';
import type { IdempotencyStore } from '../idempotency/idempotency-store.js';
import { discardIdempotentResult, installIdempotency } from '../idempotency/install-idempotency.js';
import { prefixedId } from '../ids.js';
import type { SandboxSettings } from '../settings.js';
import { Vendor } from '../vendors.js';
import { registerCustomerRoutes } from './customers.js';
import { parseForm, registerFormParser } from './form-params.js';
import { registerPaymentIntentRoutes } from './payment-intent-routes.js';
import { registerRefundRoutes } from './refund-routes.js';
import { stripeAuthHook } from './stripe-auth.js';
import { StripeApiError, StripeErrorType } from './stripe-error.js';
import { stripeIdempotencyPolicy } from './stripe-idempotency.js';
import type { StripeState } from './stripe-state.js';

export interface StripeAppDeps extends VendorAppDeps {
  readonly state: StripeState;
  readonly idempotency: IdempotencyStore;
  readonly settings: SandboxSettings;
  readonly secretKey: string;
}

/** The fake Stripe API (`/v1/…`), speaking form-encoded requests and Stripe's JSON answers. */
export function createStripeApp(deps: StripeAppDeps): FastifyInstance {
  return createVendorApp(Vendor.STRIPE, deps, {
    querystringParser: parseForm,
    setup: (app) => {
      registerFormParser(app);
      app.addHook('onRequest', async (request, reply) => {
        reply.header('Request-Id', prefixedId('req', 14));
        reply.header('Stripe-Version', request.headers['stripe-version'] ?? '2026-01-28');
        const key = request.headers['idempotency-key'];
        if (request.method === 'POST' && typeof key === 'string') reply.header('Idempotency-Key', key);
      });
      app.addHook('onRequest', stripeAuthHook(deps.secretKey));
      installIdempotency(app, stripeIdempotencyPolicy(deps.idempotency));
      app.setErrorHandler((error: FastifyError | StripeApiError, request, reply) => {
        if (error instanceof StripeApiError) {
          if (!error.saved) discardIdempotentResult(request);
          return reply.code(error.statusCode).send(error.toBody());
        }
        if (error.statusCode !== undefined && error.statusCode < 500) {
          discardIdempotentResult(request);
          return reply
            .code(error.statusCode)
            .send(
              new StripeApiError(error.statusCode, StripeErrorType.INVALID_REQUEST, error.message).toBody(),
            );
        }
        request.log.error(error);
        return reply
          .code(500)
          .send(
            new StripeApiError(
              500,
              StripeErrorType.API,
              'An unknown error occurred in the sandbox.',
            ).toBody(),
          );
      });
      app.setNotFoundHandler((request, reply) =>
        reply
          .code(404)
          .send(
            new StripeApiError(
              404,
              StripeErrorType.INVALID_REQUEST,
              `Unrecognized request URL (${request.method}: ${request.url.split('?')[0] ?? ''}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
            ).toBody(),
          ),
      );
      registerCustomerRoutes(app, deps.state);
      registerPaymentIntentRoutes(app, deps.state, deps.settings);
      registerRefundRoutes(app, deps.state);
    },
  });
}
