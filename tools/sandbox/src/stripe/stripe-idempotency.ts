import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IdempotencyStore } from '../idempotency/idempotency-store.js';
import type { IdempotencyPolicy, IdempotencyRefusal } from '../idempotency/install-idempotency.js';
import { presentedKey } from './stripe-auth.js';
import { StripeApiError, StripeErrorType } from './stripe-error.js';

/**
 * Stripe's idempotency: POST requests only; keys scoped to the API key; up to 255 characters; every answer
 * saved once the endpoint has begun executing (errors included, 500s too), replayed with
 * `Idempotent-Replayed: true`; other parameters under a used key → 400 `idempotency_error`; the same key
 * while the first request runs → 409 `idempotency_key_in_use`, nothing saved for the second.
 */
export function stripeIdempotencyPolicy(store: IdempotencyStore): IdempotencyPolicy {
  return {
    store,
    appliesTo: (request: FastifyRequest) => request.method === 'POST',
    scopeOf: (request: FastifyRequest) => presentedKey(request) ?? '',
    saves: () => true,
    keyRequired: false,
    maxKeyLength: 255,
    replayHeader: 'Idempotent-Replayed',
    refuse: (reply: FastifyReply, reason: IdempotencyRefusal, key: string | undefined) =>
      reply.code(refusal(reason, key).statusCode).send(refusal(reason, key).toBody()),
  };
}

function refusal(reason: IdempotencyRefusal, key: string | undefined): StripeApiError {
  switch (reason) {
    case 'mismatch':
      return new StripeApiError(
        400,
        StripeErrorType.IDEMPOTENCY,
        `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key ?? ''}' if you meant to execute a different request.`,
      );
    case 'in_flight':
      return new StripeApiError(
        409,
        StripeErrorType.INVALID_REQUEST,
        'There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ' +
          `${key ?? ''}. Please try again later.`,
        { code: 'idempotency_key_in_use' },
      );
    case 'invalid':
      return new StripeApiError(
        400,
        StripeErrorType.INVALID_REQUEST,
        'Idempotency-Key must be at most 255 characters long.',
        { param: 'Idempotency-Key' },
      );
    case 'missing':
      return new StripeApiError(400, StripeErrorType.INVALID_REQUEST, 'Idempotency-Key is required.');
    default: {
      const never: never = reason;
      throw new Error(`unknown refusal ${String(never)}`);
    }
  }
}
