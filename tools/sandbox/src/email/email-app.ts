import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createVendorApp, type VendorAppDeps } from '../http/create-vendor-app.js';
import type { IdempotencyStore } from '../idempotency/idempotency-store.js';
import {
  idempotencyKeyOf,
  installIdempotency,
  type IdempotencyRefusal,
} from '../idempotency/install-idempotency.js';
import { Vendor } from '../vendors.js';
import type { EmailState, SentEmail } from './email-state.js';
import { ResendApiError } from './resend-error.js';
import { sendEmail } from './send-email.js';

export interface EmailAppDeps extends VendorAppDeps {
  readonly state: EmailState;
  readonly idempotency: IdempotencyStore;
  readonly apiKey: string;
}

/** Why 20 and 100: Resend's documented default and maximum `limit` on `GET /emails`. */
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

function authHook(apiKey: string) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.authorization;
    if (header === undefined || !header.toLowerCase().startsWith('bearer ')) {
      const error = new ResendApiError(
        401,
        'missing_api_key',
        'Missing API key in the authorization header. Include the following header Authorization: Bearer YOUR_API_KEY in the request.',
      );
      return reply.code(401).send(error.toBody());
    }
    if (header.slice('bearer '.length).trim() !== apiKey) {
      return reply.code(403).send(new ResendApiError(403, 'invalid_api_key', 'API key is invalid').toBody());
    }
  };
}

function refusal(reason: IdempotencyRefusal): ResendApiError {
  switch (reason) {
    case 'mismatch':
      return new ResendApiError(
        409,
        'invalid_idempotent_request',
        'Same idempotency key used with a different request payload. Change your idempotency key or payload.',
      );
    case 'in_flight':
      return new ResendApiError(
        409,
        'concurrent_idempotent_requests',
        'Same idempotency key used while original request is still in progress. Try the request again later.',
      );
    case 'invalid':
    case 'missing':
      return new ResendApiError(400, 'invalid_idempotency_key', 'The key must be between 1-256 chars.');
    default: {
      const never: never = reason;
      throw new Error(`unknown refusal ${String(never)}`);
    }
  }
}

/** The list item shape: Resend's list carries no html, text or tags (read one email to see its tags). */
function listItem(email: SentEmail): Record<string, unknown> {
  const { id, to, from, created_at, subject, bcc, cc, reply_to, last_event, scheduled_at } = email;
  return { id, to, from, created_at, subject, bcc, cc, reply_to, last_event, scheduled_at };
}

/**
 * The fake Resend API: `POST /emails` with Resend's idempotency (replays of a success for 24 hours; 409
 * `invalid_idempotent_request` on another payload; 409 `concurrent_idempotent_requests` while in flight;
 * failed requests free the key), `GET /emails` (newest first, cursor paging), `GET /emails/:id`.
 */
export function createEmailApp(deps: EmailAppDeps): FastifyInstance {
  return createVendorApp(Vendor.EMAIL, deps, {
    setup: (app) => {
      app.addHook('onRequest', authHook(deps.apiKey));
      installIdempotency(app, {
        store: deps.idempotency,
        appliesTo: (request) => request.method === 'POST',
        scopeOf: () => 'account',
        saves: (statusCode) => statusCode < 300,
        keyRequired: false,
        maxKeyLength: 256,
        replayHeader: undefined,
        refuse: (reply, reason) => reply.code(refusal(reason).statusCode).send(refusal(reason).toBody()),
      });
      app.setErrorHandler((error: FastifyError | ResendApiError, request, reply) => {
        if (error instanceof ResendApiError) return reply.code(error.statusCode).send(error.toBody());
        if (error.statusCode !== undefined && error.statusCode < 500) {
          return reply.code(422).send(new ResendApiError(422, 'validation_error', error.message).toBody());
        }
        request.log.error(error);
        return reply
          .code(500)
          .send(new ResendApiError(500, 'internal_server_error', 'An unexpected error occurred.').toBody());
      });
      app.setNotFoundHandler((_request, reply) =>
        reply
          .code(404)
          .send(new ResendApiError(404, 'not_found', 'The requested endpoint does not exist.').toBody()),
      );

      app.post('/emails', (request) => {
        const email = sendEmail(deps.state, request.body, idempotencyKeyOf(request));
        return { id: email.id };
      });

      app.get<{ Querystring: { limit?: string; after?: string; before?: string } }>('/emails', (request) => {
        const limit = request.query.limit === undefined ? DEFAULT_LIMIT : Number(request.query.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
          throw new ResendApiError(
            422,
            'validation_error',
            'The `limit` parameter must be an integer between 1 and 100.',
          );
        }
        const all = [...deps.state.emails.values()].reverse();
        let start = 0;
        let end = all.length;
        if (request.query.after !== undefined) start = all.findIndex((e) => e.id === request.query.after) + 1;
        if (request.query.before !== undefined)
          end = Math.max(
            0,
            all.findIndex((e) => e.id === request.query.before),
          );
        const window = all.slice(start, end);
        const page = request.query.before !== undefined ? window.slice(-limit) : window.slice(0, limit);
        return { object: 'list', has_more: window.length > limit, data: page.map(listItem) };
      });

      app.get<{ Params: { id: string } }>('/emails/:id', (request) => {
        const email = deps.state.emails.get(request.params.id);
        if (email === undefined) throw new ResendApiError(404, 'not_found', 'Email not found');
        return structuredClone(email);
      });
    },
  });
}
