/**
 * The admin API of a sandbox running as its own process (`tools/sandbox/src/main.ts`, what
 * `pnpm sandbox` runs), over HTTP (docs/sandbox.md, "Admin API"): seed, faults, reset and the ledger of
 * effects. For the demo and the soak, which start the sandbox as a process; a test that starts it in
 * process calls `RunningSandbox.admin` instead. Answers are parsed, never cast; the ledger names the fields
 * its readers use and keeps the rest.
 */
import { z } from 'zod';
import type { FaultSpecInput } from '../faults/fault-rule.js';
import type { Seed } from '../seed.js';

const faultsAnswerSchema = z.object({
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
/** A fault as `GET /__admin/faults` lists it: how many requests it matched and hit so far. */
export type ArmedFault = z.infer<typeof faultsAnswerSchema>['faults'][number];

const ledgerAnswerSchema = z.looseObject({
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
        metadata: z.record(z.string(), z.unknown()),
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
/** Every effect that exists in the sandbox, oldest first, as `GET /__admin/ledger` answers. */
export type LedgerAnswer = z.infer<typeof ledgerAnswerSchema>;

export interface SandboxAdminClient {
  /** True once the admin API answers; false while the process is not listening (yet). */
  isUp(): Promise<boolean>;
  /** Adds or replaces customers and orders (by id). */
  seed(seed: Seed): Promise<void>;
  /** Arms a fault; its id. */
  addFault(spec: FaultSpecInput): Promise<string>;
  faults(): Promise<readonly ArmedFault[]>;
  /** Forgets every effect, key, fault and logged request; restores the seed and the start settings. */
  reset(): Promise<void>;
  ledger(): Promise<LedgerAnswer>;
}

/** Why 10 s: the sandbox answers in milliseconds; a call that hangs longer is a stuck process, said as such. */
const ADMIN_TIMEOUT_MS = 10_000;

/** A client of the admin API at `adminUrl` (the sandbox's `urls.admin`, without `/__admin`). */
export function sandboxAdminClient(adminUrl: string): SandboxAdminClient {
  const call = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const res = await fetch(`${adminUrl}/__admin${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
    });
    if (!res.ok)
      throw new Error(`sandbox admin ${method} ${path} answered ${res.status}: ${await res.text()}`);
    return res;
  };
  return {
    isUp: () =>
      fetch(`${adminUrl}/__admin`, { signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) }).then(
        (r) => r.ok,
        () => false,
      ),
    async seed(seed) {
      await call('POST', '/seed', seed);
    },
    async addFault(spec) {
      const res = await call('POST', '/faults', spec);
      return z.object({ id: z.string() }).parse(await res.json()).id;
    },
    async faults() {
      return faultsAnswerSchema.parse(await (await call('GET', '/faults')).json()).faults;
    },
    async reset() {
      await call('POST', '/reset');
    },
    async ledger() {
      return ledgerAnswerSchema.parse(await (await call('GET', '/ledger')).json());
    },
  };
}
