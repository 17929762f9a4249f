/**
 * The vendor sandbox as the soak drives it: its own process (`services/sandbox/src/main.ts`, what
 * `pnpm sandbox` runs) on free ports, and its admin API over HTTP (docs/sandbox.md, "Admin API"): the
 * soak's orders seeded, lost answers armed as faults, the ledger of effects read at the end. Answers are
 * parsed, never cast; only the fields the soak reads are named.
 */
import { z } from 'zod';
import { freePort } from '@agent-saga/core';
import { DEFAULT_CREDENTIALS } from '@agent-saga/sandbox';
import { sleep } from './seeded-random.js';
import type { RoleSupervisor } from './start-roles.js';

export interface SandboxUrls {
  readonly admin: string;
  readonly stripe: string;
  readonly jira: string;
  readonly email: string;
  readonly shipping: string;
}

/** An order as `POST /__admin/seed` takes it. */
export interface SeedOrder {
  readonly id: string;
  readonly customerId: string;
  readonly items: readonly { readonly sku: string; readonly quantity: number }[];
  readonly eligibleForReship: boolean;
}

/** A fault as `POST /__admin/faults` takes it (docs/sandbox.md, "Faults"). */
export interface FaultSpec {
  readonly vendor: 'stripe' | 'jira' | 'email' | 'shipping';
  readonly method?: string;
  readonly path?: string;
  readonly nth: number;
  readonly kind: 'error_after' | 'reset_after';
  readonly status?: number;
}

const faultsSchema = z.object({
  faults: z.array(
    z.looseObject({
      id: z.string(),
      vendor: z.string(),
      path: z.string().optional(),
      kind: z.string(),
      matched: z.number(),
      fired: z.number(),
    }),
  ),
});
export type ArmedFault = z.infer<typeof faultsSchema>['faults'][number];

const ledgerSchema = z.looseObject({
  stripe: z.looseObject({
    paymentIntents: z.array(
      z.looseObject({
        id: z.string(),
        status: z.string(),
        amount: z.number(),
        amount_received: z.number(),
        amount_refunded: z.number(),
        idempotencyKey: z.string().nullable(),
        metadata: z.record(z.string(), z.unknown()),
      }),
    ),
    refunds: z.array(
      z.looseObject({
        id: z.string(),
        payment_intent: z.string().nullable(),
        amount: z.number(),
        status: z.string(),
        idempotencyKey: z.string().nullable(),
      }),
    ),
  }),
  jira: z.looseObject({
    issues: z.array(
      z.looseObject({
        id: z.string(),
        key: z.string(),
        status: z.string(),
        statusCategory: z.string(),
        labels: z.array(z.string()),
      }),
    ),
  }),
  email: z.looseObject({
    emails: z.array(z.looseObject({ id: z.string(), idempotencyKey: z.string().nullable() })),
  }),
  shipping: z.looseObject({
    shipments: z.array(
      z.looseObject({
        id: z.string(),
        status: z.string(),
        orderId: z.string(),
        idempotencyKey: z.string().nullable(),
      }),
    ),
  }),
});
/** Every effect that exists in the sandbox, oldest first. */
export type SoakLedger = z.infer<typeof ledgerSchema>;

export interface SandboxAdmin {
  readonly urls: SandboxUrls;
  seed(orders: readonly SeedOrder[]): Promise<void>;
  addFault(spec: FaultSpec): Promise<string>;
  faults(): Promise<readonly ArmedFault[]>;
  ledger(): Promise<SoakLedger>;
}

async function admin(base: string, method: string, path: string, body?: unknown): Promise<Response> {
  const res = await fetch(`${base}/__admin${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`sandbox admin ${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res;
}

/** The vendors' search lag, and what the connectors are told (they must agree). */
export const SEARCH_LAG_MS = 500;

/** Starts the sandbox under `supervisor` on free ports and waits until its admin API answers. */
export async function startSandbox(supervisor: RoleSupervisor): Promise<SandboxAdmin> {
  const [adminPort, stripe, jira, email, shipping] = await Promise.all(
    Array.from({ length: 5 }, () => freePort()),
  );
  const url = (port: number | undefined) => `http://127.0.0.1:${port}`;
  const urls: SandboxUrls = {
    admin: url(adminPort),
    stripe: url(stripe),
    jira: url(jira),
    email: url(email),
    shipping: url(shipping),
  };
  supervisor.start('sandbox', {
    SANDBOX_ADMIN_PORT: String(adminPort),
    SANDBOX_STRIPE_PORT: String(stripe),
    SANDBOX_JIRA_PORT: String(jira),
    SANDBOX_EMAIL_PORT: String(email),
    SANDBOX_SHIPPING_PORT: String(shipping),
    SANDBOX_STRIPE_SEARCH_LAG_MS: String(SEARCH_LAG_MS),
    SANDBOX_JIRA_SEARCH_LAG_MS: String(SEARCH_LAG_MS),
    SANDBOX_LOG: 'false',
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!supervisor.isRunning('sandbox'))
      throw new Error(`the sandbox exited at start:\n${supervisor.output('sandbox')}`);
    const up = await fetch(`${urls.admin}/__admin`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error('the sandbox admin API did not answer within 60 s');
    await sleep(200);
  }
  return {
    urls,
    async seed(orders) {
      await admin(urls.admin, 'POST', '/seed', { orders });
    },
    async addFault(spec) {
      const res = await admin(urls.admin, 'POST', '/faults', spec);
      return z.object({ id: z.string() }).parse(await res.json()).id;
    },
    async faults() {
      return faultsSchema.parse(await (await admin(urls.admin, 'GET', '/faults')).json()).faults;
    },
    async ledger() {
      return ledgerSchema.parse(await (await admin(urls.admin, 'GET', '/ledger')).json());
    },
  };
}

/** The connector configuration that points every vendor at the sandbox (as test/fixtures/sandbox-env.ts). */
export function connectorEnv(urls: SandboxUrls): Record<string, string> {
  const c = DEFAULT_CREDENTIALS;
  const lag = String(SEARCH_LAG_MS);
  return {
    SAGA_TOOLS: 'packages/connectors/src/support-agent-tools.ts',
    STRIPE_SECRET_KEY: c.stripeSecretKey,
    STRIPE_API_BASE: urls.stripe,
    STRIPE_LOOKUP_LAG_MS: lag,
    JIRA_BASE_URL: urls.jira,
    JIRA_EMAIL: c.jiraEmail,
    JIRA_API_TOKEN: c.jiraApiToken,
    JIRA_PROJECT_KEY: 'SUP',
    JIRA_LOOKUP_LAG_MS: lag,
    EMAIL_API_BASE: urls.email,
    EMAIL_API_KEY: c.emailApiKey,
    EMAIL_FROM: 'support@example.com',
    EMAIL_LOOKUP_LAG_MS: lag,
    SHIPPING_API_BASE: urls.shipping,
    SHIPPING_API_KEY: c.shippingApiKey,
  };
}
