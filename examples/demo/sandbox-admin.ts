/**
 * The sandbox, seen from the demo: a separate process (`services/sandbox/src/main.ts`) on free ports, and
 * its admin API over HTTP (docs/sandbox.md, "Admin API"): faults, reset and the ledger of effects. The
 * ledger is parsed, never cast; only the fields the demo reads are named, the rest is kept.
 */
import { z } from 'zod';
import { freePort } from '@agent-saga/core';
import type { ProcessSupervisor, SupervisedProcess } from './process-supervisor.js';
import { waitFor } from './wait-for.js';

/** The credentials the sandbox accepts when none are configured (docs/sandbox.md, DEFAULT_CREDENTIALS). */
export const SANDBOX_CREDENTIALS = Object.freeze({
  stripeSecretKey: 'sk_test_sandbox',
  jiraEmail: 'agent@example.com',
  jiraApiToken: 'sandbox-jira-token',
  emailApiKey: 're_sandbox',
  shippingApiKey: 'ship_sandbox',
});

export interface SandboxUrls {
  readonly admin: string;
  readonly stripe: string;
  readonly jira: string;
  readonly email: string;
  readonly shipping: string;
}

/** A fault as `POST /__admin/faults` takes it (docs/sandbox.md, "Faults"). */
export interface FaultSpec {
  readonly vendor: 'stripe' | 'jira' | 'email' | 'shipping';
  readonly method?: string;
  readonly path?: string;
  readonly nth?: number;
  readonly kind: 'drop' | 'error_after' | 'reset_after' | 'delay' | 'status';
}

const ledgerSchema = z.looseObject({
  stripe: z.looseObject({
    paymentIntents: z.array(
      z.looseObject({
        id: z.string(),
        status: z.string(),
        amount: z.number(),
        amount_received: z.number(),
        amount_refunded: z.number(),
        currency: z.string(),
        receipt_email: z.string().nullable(),
        idempotencyKey: z.string().nullable(),
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
        summary: z.string(),
        status: z.string(),
        statusCategory: z.string(),
        labels: z.array(z.string()),
        comments: z.array(z.looseObject({ id: z.string(), text: z.string() })),
      }),
    ),
  }),
  email: z.looseObject({
    emails: z.array(
      z.looseObject({
        id: z.string(),
        to: z.union([z.string(), z.array(z.string())]),
        subject: z.string(),
        idempotencyKey: z.string().nullable(),
      }),
    ),
  }),
  shipping: z.looseObject({
    shipments: z.array(z.looseObject({ id: z.string(), status: z.string(), orderId: z.string() })),
  }),
});
/** Every effect that exists in the sandbox, oldest first. */
export type Ledger = z.infer<typeof ledgerSchema>;

/** The search lag of both Stripe and Jira in the demo; the connectors are told the same. */
export const DEMO_SEARCH_LAG_MS = 500;

export interface RunningSandbox {
  readonly process: SupervisedProcess;
  readonly urls: SandboxUrls;
  /** Resolves once the admin API answers; fails if the process exits first. */
  ready(): Promise<unknown>;
  addFault(spec: FaultSpec): Promise<void>;
  /** Forgets every effect, key, fault and logged request; restores the seed and the start settings. */
  reset(): Promise<void>;
  ledger(): Promise<Ledger>;
}

async function admin(base: string, method: string, path: string, body?: unknown): Promise<Response> {
  const res = await fetch(`${base}/__admin${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`sandbox admin ${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res;
}

/**
 * Starts the sandbox as its own process on free ports, without waiting: its URLs are known at once, so the
 * harness's roles can start beside it (`ready()` waits for its admin API).
 */
export async function startSandboxProcess(supervisor: ProcessSupervisor): Promise<RunningSandbox> {
  const [admin_, stripe, jira, email, shipping] = await Promise.all(
    Array.from({ length: 5 }, () => freePort()),
  );
  const url = (port: number | undefined) => `http://127.0.0.1:${port}`;
  const urls: SandboxUrls = {
    admin: url(admin_),
    stripe: url(stripe),
    jira: url(jira),
    email: url(email),
    shipping: url(shipping),
  };
  const proc = supervisor.start('sandbox', 'services/sandbox/src/main.ts', {
    SANDBOX_ADMIN_PORT: String(admin_),
    SANDBOX_STRIPE_PORT: String(stripe),
    SANDBOX_JIRA_PORT: String(jira),
    SANDBOX_EMAIL_PORT: String(email),
    SANDBOX_SHIPPING_PORT: String(shipping),
    SANDBOX_STRIPE_SEARCH_LAG_MS: String(DEMO_SEARCH_LAG_MS),
    SANDBOX_JIRA_SEARCH_LAG_MS: String(DEMO_SEARCH_LAG_MS),
    SANDBOX_LOG: 'false',
  });
  return {
    process: proc,
    urls,
    ready: () =>
      waitFor(
        'the sandbox admin API',
        async () => {
          if (proc.hasExited) throw new Error(`the sandbox exited at start:\n${proc.output()}`);
          return fetch(`${urls.admin}/__admin`).then(
            (r) => (r.ok ? true : undefined),
            () => undefined,
          );
        },
        45_000,
        200,
      ),
    async addFault(spec) {
      await admin(urls.admin, 'POST', '/faults', spec);
    },
    async reset() {
      await admin(urls.admin, 'POST', '/reset');
    },
    async ledger() {
      return ledgerSchema.parse(await (await admin(urls.admin, 'GET', '/ledger')).json());
    },
  };
}
