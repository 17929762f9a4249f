import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { createAdminApp } from './admin/admin-app.js';
import { createEmailApp } from './email/email-app.js';
import { createJiraApp } from './jira/jira-app.js';
import { SandboxCore, type SandboxAdmin } from './sandbox-core.js';
import { DEFAULT_SEED, type Seed } from './seed.js';
import {
  DEFAULT_CREDENTIALS,
  DEFAULT_SETTINGS,
  type SandboxCredentials,
  type SandboxSettings,
} from './settings.js';
import { createShippingApp } from './shipping/shipping-app.js';
import { createStripeApp } from './stripe/stripe-app.js';
import type { Vendor } from './vendors.js';

export type SandboxServer = Vendor | 'admin';

export interface SandboxOptions {
  /** Interface to listen on; default 127.0.0.1. */
  readonly host?: string;
  /** Port per server; 0 (the default) picks a free one. */
  readonly ports?: Partial<Record<SandboxServer, number>>;
  readonly settings?: Partial<SandboxSettings>;
  readonly credentials?: Partial<SandboxCredentials>;
  /** Jira projects that exist; default `['SUP']`. */
  readonly jiraProjectKeys?: readonly string[];
  /** Customers and orders present at start and after each reset; default `DEFAULT_SEED`. */
  readonly seed?: Seed;
  /** Log requests with pino; default false. */
  readonly logger?: boolean;
}

export interface RunningSandbox {
  /** Base URL of each server, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  readonly urls: Readonly<Record<SandboxServer, string>>;
  /** Host and port of each server, for clients configured by parts (the Stripe client). */
  readonly ports: Readonly<Record<SandboxServer, number>>;
  readonly host: string;
  readonly credentials: SandboxCredentials;
  /** The admin API in process; the same operations as `/__admin/*`. */
  readonly admin: SandboxAdmin;
  close(): Promise<void>;
}

/** Starts the four vendor servers and the admin server; each listens before this resolves. */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? false;
  const credentials: SandboxCredentials = Object.freeze({ ...DEFAULT_CREDENTIALS, ...options.credentials });
  const core = new SandboxCore(
    Object.freeze({ ...DEFAULT_SETTINGS, ...options.settings }),
    options.seed ?? DEFAULT_SEED,
    options.jiraProjectKeys ?? ['SUP'],
  );
  const shared = { faults: core.faultInjector, requestLog: core.requestLog, logger };
  const urls: Partial<Record<SandboxServer, string>> = {};
  const apps: Record<SandboxServer, FastifyInstance> = {
    stripe: createStripeApp({
      ...shared,
      state: core.stripe,
      idempotency: core.stripeIdempotency,
      settings: core.liveSettings,
      secretKey: credentials.stripeSecretKey,
    }),
    jira: createJiraApp({
      ...shared,
      state: core.jira,
      settings: core.liveSettings,
      email: credentials.jiraEmail,
      apiToken: credentials.jiraApiToken,
    }),
    email: createEmailApp({
      ...shared,
      state: core.email,
      idempotency: core.emailIdempotency,
      apiKey: credentials.emailApiKey,
    }),
    shipping: createShippingApp({
      ...shared,
      state: core.shipping,
      idempotency: core.shippingIdempotency,
      apiKey: credentials.shippingApiKey,
    }),
    admin: createAdminApp(core, () => ({ ...urls }), logger),
  };
  const ports: Partial<Record<SandboxServer, number>> = {};
  const started: FastifyInstance[] = [];
  try {
    for (const [name, app] of Object.entries(apps) as [SandboxServer, FastifyInstance][]) {
      await app.listen({ host, port: options.ports?.[name] ?? 0 });
      started.push(app);
      const port = (app.server.address() as AddressInfo).port;
      ports[name] = port;
      urls[name] = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    }
  } catch (error) {
    await Promise.all(started.map((app) => app.close()));
    throw error;
  }
  return {
    urls: urls as Record<SandboxServer, string>,
    ports: ports as Record<SandboxServer, number>,
    host,
    credentials,
    admin: core,
    close: async () => {
      await Promise.all(Object.values(apps).map((app) => app.close()));
    },
  };
}
