import type { StripeClient } from './stripe-client.js';
import type { StripeConfig } from './stripe-config.js';

/** What every Stripe tool is built from: one client and the parsed config, shared by all tools. */
export interface StripeToolDeps {
  readonly stripe: StripeClient;
  readonly config: StripeConfig;
}
