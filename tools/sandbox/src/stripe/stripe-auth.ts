import type { FastifyReply, FastifyRequest } from 'fastify';
import { StripeApiError, StripeErrorType } from './stripe-error.js';

const NO_KEY =
  "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.";

/** The secret key a request presents: Bearer, or Basic with the key as user name (as curl -u sends it). */
export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const [scheme, value = ''] = header.split(' ', 2);
  if (scheme?.toLowerCase() === 'bearer') return value.trim();
  if (scheme?.toLowerCase() === 'basic') return Buffer.from(value, 'base64').toString('utf8').split(':')[0];
  return undefined;
}

/** Masks a key as Stripe does in its error message: the prefix and the last four characters. */
function masked(key: string): string {
  const prefix = /^(sk|rk|pk)_(test|live)_/.exec(key)?.[0] ?? '';
  return `${prefix}${'*'.repeat(Math.max(0, key.length - prefix.length - 4))}${key.slice(-4)}`;
}

/** `onRequest` hook: 401 with Stripe's error body unless the request presents the sandbox's secret key. */
export function stripeAuthHook(secretKey: string) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const key = presentedKey(request);
    if (key === secretKey) return;
    const message = key === undefined || key === '' ? NO_KEY : `Invalid API Key provided: ${masked(key)}`;
    return reply.code(401).send(new StripeApiError(401, StripeErrorType.INVALID_REQUEST, message).toBody());
  };
}
