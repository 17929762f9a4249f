// The public surface of @agent-saga/connectors. Named exports only.
// --- Stripe ---
export {
  stripeConfigFromEnv,
  DEFAULT_STRIPE_LOOKUP_LAG_MS,
  DEFAULT_STRIPE_TIMEOUT_MS,
  type StripeConfig,
  type StripeApiBase,
} from './stripe/stripe-config.js';
export { createStripeTools, type StripeTools } from './stripe/create-stripe-tools.js';
export { classifyStripeError } from './stripe/classify-stripe-error.js';
export { VendorIdempotencyMismatchError, StripeOutcomeUnknownError } from './stripe/stripe-errors.js';
