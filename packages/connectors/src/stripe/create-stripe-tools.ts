import { createAuthorizePaymentTool } from './authorize-payment.js';
import { createCancelAuthorizationTool } from './cancel-authorization.js';
import { createCapturePaymentTool } from './capture-payment.js';
import { createChargeCardTool } from './charge-card.js';
import { createRefundTool } from './refund.js';
import { createStripeClient, type StripeClient } from './stripe-client.js';
import type { StripeConfig } from './stripe-config.js';

/** The Stripe tools, by name. `Object.values(tools)` is what a tool module registers. */
export interface StripeTools {
  readonly charge_card: ReturnType<typeof createChargeCardTool>;
  readonly authorize_payment: ReturnType<typeof createAuthorizePaymentTool>;
  readonly capture_payment: ReturnType<typeof createCapturePaymentTool>;
  readonly refund: ReturnType<typeof createRefundTool>;
  readonly cancel_authorization: ReturnType<typeof createCancelAuthorizationTool>;
}

/**
 * Builds the Stripe tools over one official client. No I/O happens here; the first request is the first
 * call. Register all of them together: the compensations name `refund` and `cancel_authorization`.
 * `stripe`: the client to share with the module's lookups (`createStripeLookups`); one of its own by default.
 *
 * No tool declares a `commitHorizonMs`, so each keeps the default (its timeout): Stripe dedupes a re-send
 * by its Idempotency-Key (the step's key), so a "not found" believed before a held request commits cannot
 * make a second charge; the re-send returns the first. Compare Jira (`JIRA_COMMIT_HORIZON_MS`).
 */
export function createStripeTools(
  config: StripeConfig,
  stripe: StripeClient = createStripeClient(config),
): StripeTools {
  const deps = { stripe, config };
  return Object.freeze({
    charge_card: createChargeCardTool(deps),
    authorize_payment: createAuthorizePaymentTool(deps),
    capture_payment: createCapturePaymentTool(deps),
    refund: createRefundTool(deps),
    cancel_authorization: createCancelAuthorizationTool(deps),
  });
}
