/**
 * Helpers for reconciler tests: the reconciler started as a real child process against the test file's
 * schema and queue prefix, and unsettled steps written straight into the saga log with core's own
 * operations (intent, executor claim, UNKNOWN), as an executor that died or met a 504 would leave them.
 */
import { sql, type Kysely } from 'kysely';
import { claimStep, StepStatus, transitionStep, type StepRow, type ToolRegistry } from '@agent-saga/core';
import type { Logger } from 'pino';
import { expect } from 'vitest';
import { claimReconcilableSteps, reconcileStep, type SettleResult } from '../src/index.js';
import type { TestEnv } from '@agent-saga/core/testing';
import {
  createIntent,
  EFFECT_TOOLS,
  readStep,
  startRole,
  type RoleProcess,
} from '../../../test/fixtures/dispatcher-processes.js';

/** Short intervals so a test sees several sweeps per second. */
export const TEST_RECONCILER_ENV: Readonly<Record<string, string>> = {
  SAGA_TOOLS: EFFECT_TOOLS,
  RECONCILER_SWEEP_MS: '200',
  RECONCILER_SCAN_MS: '1000',
  LOOKUP_RECHECK_MS: '300',
  RECONCILER_BACKOFF_BASE_MS: '300',
  RECONCILER_LEASE_MARGIN_MS: '1000',
  FIXTURE_TOOL_TIMEOUT_MS: '1000',
  DB_POOL_SIZE: '6',
  LOG_LEVEL: 'info',
};

/** A reconciler child process. */
export type ReconcilerProcess = RoleProcess;

/** Starts `node --import tsx services/reconciler/src/bin/reconciler.ts` with the test file's environment. */
export function startReconciler(env: TestEnv, extra: Record<string, string> = {}): ReconcilerProcess {
  return startRole(env, 'reconciler', { ...TEST_RECONCILER_ENV, ...extra });
}

/** Waits until the process has logged `msg` (a pino `msg` field). */
export async function waitForLog(p: ReconcilerProcess, msg: string, timeoutMs = 40_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!p.output().includes(`"msg":"${msg}"`)) {
    if (p.child.exitCode !== null) throw new Error(`process exited before logging ${msg}:\n${p.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for log ${msg}:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface UnsettledStep {
  readonly runId: string;
  readonly stepIdx: number;
  readonly key: string;
}

/**
 * An INTENDED step claimed by an executor that is gone: its message is marked published (no relay sends
 * it) and its lease lasts `leaseMs` (expired soon after). With `effect`, the call reached the system first.
 */
export async function lapsedIntent(
  env: TestEnv,
  runId: string,
  o: { readonly leaseMs: number; readonly effects?: number; readonly tool?: string },
): Promise<UnsettledStep> {
  const tool = o.tool ?? 'create_note';
  const row = await createIntent(env, {
    runId,
    stepIdx: 0,
    tool,
    args: { orderId: runId, text: 'reconcile me' },
    unrelayed: true,
  });
  const claim = await claimStep(env.db, {
    runId: row.run_id,
    stepIdx: row.step_idx,
    key: row.idempotency_key,
    worker: 'gone-executor',
    leaseMs: o.leaseMs,
    jobId: row.idempotency_key,
    schema: env.schema,
  });
  if (claim.kind !== 'claimed') throw new Error(`fixture claim failed: ${claim.kind}`);
  await insertEffects(env, row.idempotency_key, tool, o.effects ?? 0);
  return { runId, stepIdx: 0, key: row.idempotency_key };
}

/**
 * An UNKNOWN step: claimed, then recorded UNKNOWN as an executor does after a timeout or a 5xx. With
 * `effects`, that many effects exist under its key (one: a 504 after commit; two: a duplicate).
 */
export async function unknownStep(
  env: TestEnv,
  runId: string,
  o: {
    readonly effects?: number;
    readonly tool?: string;
    /**
     * How long ago the attempt was sent: past the tool's commit horizon and lag (1 s here), a "not found"
     * is believed at the first pass; 0 (the default), the first lookup is too early.
     */
    readonly attemptedAgoMs?: number;
  } = {},
): Promise<UnsettledStep> {
  const s = await lapsedIntent(env, runId, { leaseMs: 60_000, ...o });
  await env.db.transaction().execute((trx) =>
    transitionStep(trx, {
      runId: s.runId,
      stepIdx: s.stepIdx,
      to: StepStatus.UNKNOWN,
      onlyFrom: [StepStatus.INTENDED],
      leaseOwner: 'gone-executor',
      cause: 'executor: tool threw',
      detail: { code: 'UPSTREAM_5XX' },
      patch: {
        lease_until: null,
        lease_owner: null,
        error: JSON.stringify({ code: 'UPSTREAM_5XX', message: 'upstream answered 504' }),
        ...(o.attemptedAgoMs ? { last_attempt_at: new Date(Date.now() - o.attemptedAgoMs) } : {}),
      },
      schema: env.schema,
    }),
  );
  return s;
}

async function insertEffects(env: TestEnv, key: string, tool: string, n: number): Promise<void> {
  const fx = env.db as unknown as Kysely<unknown>;
  for (let i = 0; i < n; i++)
    await sql`INSERT INTO fixture_effects (key, tool, args) VALUES (${key}, ${tool}, '{}')`.execute(fx);
}

export async function mustRead(env: TestEnv, key: string): Promise<StepRow> {
  const row = await readStep(env.db, key);
  if (!row) throw new Error(`no step ${key}`);
  return row;
}

/** One Prometheus sample's value from `GET /metrics` (the sum over series matching every label given). */
export async function scrape(
  port: number,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let sum = 0;
  for (const line of body.split('\n')) {
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const ls = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => ls.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

/**
 * One reconcile pass over an UNKNOWN step in this process, as the worker makes it: claim under a lease,
 * look up with `registry`'s tool, settle. For tests whose tools (a lookup that refuses, a vendor that
 * dedupes) the child reconciler's fixture module does not have.
 */
export async function reconcileOnce(
  env: TestEnv,
  s: UnsettledStep,
  c: { readonly registry: ToolRegistry; readonly owner: string; readonly logger: Logger },
): Promise<SettleResult> {
  const [claimed] = await claimReconcilableSteps(env.db, {
    owner: c.owner,
    leaseMs: 30_000,
    limit: 1,
    key: s.key,
    schema: env.schema,
  });
  expect(claimed?.status).toBe(StepStatus.UNKNOWN);
  return reconcileStep(
    {
      db: env.db,
      schema: env.schema,
      registry: c.registry,
      owner: c.owner,
      recheckMs: 10,
      policy: {
        maxLookupErrors: 3,
        maxUnknownAgeMs: 3_600_000,
        backoffBaseMs: 100,
        backoffMaxMs: 1_000,
        redispatchBudget: { maxRedispatches: 3 },
      },
      logger: c.logger,
    },
    claimed!,
  );
}

/** Every outbox message of the step: one per dispatch. */
export const outboxOf = (env: TestEnv, key: string) =>
  env.db.selectFrom('outbox').select(['job_id']).where('idempotency_key', '=', key).execute();
