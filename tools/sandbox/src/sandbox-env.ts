/**
 * The two environments around a sandbox: the one that starts it as its own process on given ports
 * (`tools/sandbox/src/main.ts` reads it through `loadSandboxOptions`), and the one that points the
 * support agent's connectors at it. The demo, the soak and the tests that run dispatcher roles against a
 * sandbox build them here, so a renamed variable is renamed once.
 */
import type { SandboxCredentials } from './settings.js';
import type { SandboxServer } from './start-sandbox.js';

export type SandboxPorts = Readonly<Record<SandboxServer, number>>;
export type SandboxUrls = Readonly<Record<SandboxServer, string>>;

/** The base URL of each server of a sandbox listening on `ports` (no trailing slash). */
export function sandboxUrls(ports: SandboxPorts, host = '127.0.0.1'): SandboxUrls {
  const url = (port: number) => `http://${host}:${port}`;
  return {
    admin: url(ports.admin),
    stripe: url(ports.stripe),
    jira: url(ports.jira),
    email: url(ports.email),
    shipping: url(ports.shipping),
  };
}

/**
 * The environment of a sandbox process on `ports`, quiet, with Stripe's and Jira's search lagging their
 * writes by `searchLagMs` (what the connectors must then be told: `sandboxConnectorEnv`'s `lagMs`).
 */
export function sandboxProcessEnv(ports: SandboxPorts, searchLagMs: number): Record<string, string> {
  return {
    SANDBOX_ADMIN_PORT: String(ports.admin),
    SANDBOX_STRIPE_PORT: String(ports.stripe),
    SANDBOX_JIRA_PORT: String(ports.jira),
    SANDBOX_EMAIL_PORT: String(ports.email),
    SANDBOX_SHIPPING_PORT: String(ports.shipping),
    SANDBOX_STRIPE_SEARCH_LAG_MS: String(searchLagMs),
    SANDBOX_JIRA_SEARCH_LAG_MS: String(searchLagMs),
    SANDBOX_LOG: 'false',
  };
}

/**
 * The connector configuration that points every vendor at a sandbox, for dispatcher roles started with
 * `SAGA_TOOLS=toolsModule` (the support agent's tool module). `lagMs` is both the sandbox's search lag and
 * what the connectors are told to allow for.
 */
export function sandboxConnectorEnv(
  sandbox: { readonly urls: SandboxUrls; readonly credentials: SandboxCredentials },
  opts: { readonly lagMs: number; readonly toolsModule: string },
): Record<string, string> {
  const c = sandbox.credentials;
  const lag = String(opts.lagMs);
  return {
    SAGA_TOOLS: opts.toolsModule,
    STRIPE_SECRET_KEY: c.stripeSecretKey,
    STRIPE_API_BASE: sandbox.urls.stripe,
    STRIPE_LOOKUP_LAG_MS: lag,
    JIRA_BASE_URL: sandbox.urls.jira,
    JIRA_EMAIL: c.jiraEmail,
    JIRA_API_TOKEN: c.jiraApiToken,
    JIRA_PROJECT_KEY: 'SUP',
    JIRA_LOOKUP_LAG_MS: lag,
    EMAIL_API_BASE: sandbox.urls.email,
    EMAIL_API_KEY: c.emailApiKey,
    EMAIL_FROM: 'support@example.com',
    EMAIL_LOOKUP_LAG_MS: lag,
    SHIPPING_API_BASE: sandbox.urls.shipping,
    SHIPPING_API_KEY: c.shippingApiKey,
  };
}
