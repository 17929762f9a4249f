/**
 * The support agent's tool module: `SAGA_TOOLS=packages/connectors/src/support-agent-tools.ts`. The
 * dispatcher and the executors load it (its default export is the array of tools; `definitions`, the saga
 * definitions built on them; `lookups`, the reads their invariants make, over the same vendor clients), so this module is where a process's connector configuration is parsed, once,
 * from its environment; a missing variable stops the process at start, naming it. No I/O here: the pg pool
 * for email drafts connects on first use.
 */
import { createDb, type AnyTool } from '@agent-saga/core';
import { DEFAULT_EMAIL_TEMPLATES } from './email/default-email-templates.js';
import { emailConfigFromEnv } from './email/email-config.js';
import { createEmailTools } from './email/email-tools.js';
import { jiraConfigFromEnv } from './jira/jira-config.js';
import { createJiraTools } from './jira/jira-tools.js';
import { shippingConfigFromEnv } from './shipping/shipping-config.js';
import { createShippingLookups } from './shipping/shipping-lookups.js';
import { createShippingTools } from './shipping/shipping-tools.js';
import { createStripeTools } from './stripe/create-stripe-tools.js';
import { createStripeClient } from './stripe/stripe-client.js';
import { stripeConfigFromEnv } from './stripe/stripe-config.js';
import { createStripeLookups } from './stripe/stripe-lookups.js';
import { supportAgentSagas } from './support-agent-sagas.js';

const env: Record<string, string | undefined> = process.env;
const emailConfig = emailConfigFromEnv(env);
const stripeConfig = stripeConfigFromEnv(env);
const stripe = createStripeClient(stripeConfig);
const shippingConfig = shippingConfigFromEnv(env);
const stripeTools: readonly AnyTool[] = Object.values(createStripeTools(stripeConfig, stripe));

const tools: readonly AnyTool[] = [
  ...stripeTools,
  ...createJiraTools(jiraConfigFromEnv(env)),
  ...createEmailTools(emailConfig, DEFAULT_EMAIL_TEMPLATES, {
    db: createDb({ ...emailConfig.db, poolSize: 4, applicationName: 'agent-saga-email-drafts' }),
  }),
  ...createShippingTools(shippingConfig),
];
export default tools;

/** `refund_and_reship` and `refund_and_reship_pivot`, registered against the tools above at start. */
export const definitions = supportAgentSagas;

/**
 * The reads of `refund_and_reship`'s invariant, by name (`charge`, `refundsOf`, `shipmentsOf`), over the
 * tools' own Stripe client and warehouse endpoint; the roles that end runs pass them to its check.
 */
export const lookups = Object.freeze({
  ...createStripeLookups({ stripe, config: stripeConfig }),
  ...createShippingLookups(shippingConfig),
});
