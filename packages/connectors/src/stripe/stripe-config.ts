import { ConfigError, parseConfig } from '@agent-saga/core';
import { z } from 'zod';

/**
 * Why 60 s: Stripe's search "is not suitable for read-after-write flows"; new or changed objects may take
 * up to a minute to appear. A lookup's "not found" is only believed once this long has passed since the call.
 */
export const DEFAULT_STRIPE_LOOKUP_LAG_MS = 60_000;

/**
 * Why 20 s: the per-request timeout of the Stripe client. It stays below the executor's default 30 s tool
 * timeout, so a slow request surfaces as the client's own timeout (an UNKNOWN outcome) rather than an abort.
 */
export const DEFAULT_STRIPE_TIMEOUT_MS = 20_000;

/**
 * Why 7 days: Stripe keeps an uncaptured online card PaymentIntent's authorisation for 7 days (some card
 * networks less); a pivot that stages an authorisation must be decided before then. Lower it per deployment
 * to stay on the safe side of the networks you use.
 */
export const DEFAULT_STRIPE_HOLD_WINDOW_MS = 7 * 24 * 3600_000;

/** Where the official client sends requests; null means the real API (`https://api.stripe.com`). */
export interface StripeApiBase {
  readonly protocol: 'http' | 'https';
  readonly host: string;
  readonly port: number;
}

/** The Stripe connector's settings, parsed once. `secretKey` is not enumerable: it never reaches a log. */
export interface StripeConfig {
  readonly secretKey: string;
  readonly apiBase: StripeApiBase | null;
  /** How long Stripe's PaymentIntent search may lag behind a write (the tools' `lookupLagMs`). */
  readonly lookupLagMs: number;
  /** Per-request timeout given to the client; also the tools' `timeoutMs` budget (see create-stripe-tools). */
  readonly timeoutMs: number;
  /** How long an authorisation holds (`authorize_payment`'s `holdWindowMs`). */
  readonly holdWindowMs: number;
}

const nonNegativeInt = (def: number) => z.coerce.number().int().nonnegative().default(def);

const stripeEnvSchema = z.object({
  STRIPE_SECRET_KEY: z.string().min(1, 'is required (sk_live_…, sk_test_… or rk_…)'),
  /** e.g. `http://127.0.0.1:12111` (the sandbox); unset means the real API. */
  STRIPE_API_BASE: z.url({ protocol: /^https?$/ }).optional(),
  STRIPE_LOOKUP_LAG_MS: nonNegativeInt(DEFAULT_STRIPE_LOOKUP_LAG_MS),
  STRIPE_TIMEOUT_MS: z.coerce.number().int().positive().default(DEFAULT_STRIPE_TIMEOUT_MS),
  STRIPE_HOLD_WINDOW_MS: z.coerce.number().int().positive().default(DEFAULT_STRIPE_HOLD_WINDOW_MS),
});

/**
 * Parses the Stripe variables from `env` (usually `process.env`, passed in by the entry point). A missing
 * or malformed variable throws {@link ConfigError} naming it; the key's value is never in the message.
 */
export function stripeConfigFromEnv(env: Record<string, string | undefined>): StripeConfig {
  const parsed = parseConfig(stripeEnvSchema, env);
  const config = {
    apiBase: parsed.STRIPE_API_BASE === undefined ? null : apiBaseOf(parsed.STRIPE_API_BASE),
    lookupLagMs: parsed.STRIPE_LOOKUP_LAG_MS,
    timeoutMs: parsed.STRIPE_TIMEOUT_MS,
    holdWindowMs: parsed.STRIPE_HOLD_WINDOW_MS,
  };
  Object.defineProperty(config, 'secretKey', { value: parsed.STRIPE_SECRET_KEY, enumerable: false });
  return Object.freeze(config) as StripeConfig;
}

/** Splits a base URL into the parts the official client takes; a path or query is refused, not ignored. */
function apiBaseOf(raw: string): StripeApiBase {
  const url = new URL(raw);
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    throw new ConfigError(`invalid configuration:\n  STRIPE_API_BASE: must be scheme://host[:port], no path`);
  }
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  const port = url.port === '' ? (protocol === 'http' ? 80 : 443) : Number(url.port);
  // URL keeps IPv6 hosts in brackets; the client wants the bare address.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return Object.freeze({ protocol, host, port });
}
