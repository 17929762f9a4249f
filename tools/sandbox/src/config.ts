import { z } from 'zod';
import { DEFAULT_SETTINGS } from './settings.js';
import type { SandboxOptions } from './start-sandbox.js';

const port = (fallback: number) => z.coerce.number().int().min(0).max(65_535).default(fallback);
const lag = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/**
 * The CLI's environment. Why these ports: 12111 is stripe-mock's, so `STRIPE_API_BASE=http://127.0.0.1:12111`
 * (the issue's example) works; the others follow it.
 */
export const sandboxEnvSchema = z.object({
  SANDBOX_HOST: z.string().default('127.0.0.1'),
  SANDBOX_ADMIN_PORT: port(12110),
  SANDBOX_STRIPE_PORT: port(12111),
  SANDBOX_JIRA_PORT: port(12112),
  SANDBOX_EMAIL_PORT: port(12113),
  SANDBOX_SHIPPING_PORT: port(12114),
  SANDBOX_STRIPE_SEARCH_LAG_MS: lag(DEFAULT_SETTINGS.stripeSearchLagMs),
  SANDBOX_JIRA_SEARCH_LAG_MS: lag(DEFAULT_SETTINGS.jiraSearchLagMs),
  SANDBOX_LOG: z.enum(['true', 'false']).default('true'),
});

/** Parses the environment once into the options of `startSandbox`; a bad variable fails with its name. */
export function loadSandboxOptions(env: Record<string, string | undefined>): SandboxOptions {
  const parsed = sandboxEnvSchema.safeParse(env);
  if (!parsed.success) {
    const names = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid sandbox environment: ${names}`);
  }
  const e = parsed.data;
  return Object.freeze({
    host: e.SANDBOX_HOST,
    ports: {
      admin: e.SANDBOX_ADMIN_PORT,
      stripe: e.SANDBOX_STRIPE_PORT,
      jira: e.SANDBOX_JIRA_PORT,
      email: e.SANDBOX_EMAIL_PORT,
      shipping: e.SANDBOX_SHIPPING_PORT,
    },
    settings: {
      stripeSearchLagMs: e.SANDBOX_STRIPE_SEARCH_LAG_MS,
      jiraSearchLagMs: e.SANDBOX_JIRA_SEARCH_LAG_MS,
    },
    logger: e.SANDBOX_LOG === 'true',
  });
}
