/**
 * The support agent's tool module: `SAGA_TOOLS=packages/connectors/src/support-agent-tools.ts`. The
 * dispatcher and the executors load it (its default export is the array of tools; `definitions`, the saga
 * definitions built on them), so this module is where a process's connector configuration is parsed, once,
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
import { createShippingTools } from './shipping/shipping-tools.js';
import { createStripeTools } from './stripe/create-stripe-tools.js';
import { stripeConfigFromEnv } from './stripe/stripe-config.js';
import { supportAgentSagas } from './support-agent-sagas.js';

const env: Record<string, string | undefined> = process.env;
const emailConfig = emailConfigFromEnv(env);
const stripeTools: readonly AnyTool[] = Object.values(createStripeTools(stripeConfigFromEnv(env)));

const tools: readonly AnyTool[] = [
  ...stripeTools,
  ...createJiraTools(jiraConfigFromEnv(env)),
  ...createEmailTools(emailConfig, DEFAULT_EMAIL_TEMPLATES, {
    db: createDb({ ...emailConfig.db, poolSize: 4, applicationName: 'agent-saga-email-drafts' }),
  }),
  ...createShippingTools(shippingConfigFromEnv(env)),
];
export default tools;

/** `refund_and_reship` and `refund_and_reship_pivot`, registered against the tools above at start. */
export const definitions = supportAgentSagas;
