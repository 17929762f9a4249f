import Stripe from 'stripe';
import type { StripeConfig } from './stripe-config.js';

/** The official client, configured for the harness. */
export type StripeClient = Stripe;

/**
 * Builds the official client. `maxNetworkRetries: 0`: retrying is the harness's decision, made with a
 * recorded outcome, not the client's. (The client still retries a reset connection once by itself; every
 * POST carries the harness's key, so that retry is a replay, never a second effect.) Telemetry is off so no
 * request carries data about an earlier one.
 */
export function createStripeClient(config: StripeConfig): StripeClient {
  return new Stripe(config.secretKey, {
    maxNetworkRetries: 0,
    timeout: config.timeoutMs,
    telemetry: false,
    ...(config.apiBase === null
      ? {}
      : { protocol: config.apiBase.protocol, host: config.apiBase.host, port: config.apiBase.port }),
  });
}
