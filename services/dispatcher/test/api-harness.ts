/**
 * Builds the dispatcher API in-process for a test file: its own schema and queue prefix, the fixture tools
 * (which write their effects to a table), two tenants with a token each, and helpers that play the
 * executor by writing to the saga log directly (the executor is exercised by its own tests).
 */
import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import {
  createApiToken,
  createLogger,
  createToolRegistry,
  defineTool,
  StepStatus,
  transitionStep,
  type AnyTool,
  type StepRow,
  type ToolEffect,
  type ExecuteJob,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import type { Queue } from 'bullmq';
import { buildApi, type ApiApp } from '../src/api/build-api.js';
import type { ApiMetrics } from '../src/metrics/api-metrics.js';
import type { SettleWaiter } from '../src/api/settle-waiter.js';
import { loadDispatcherConfig, type DispatcherConfig } from '../src/config.js';
import { bullmqConnection } from '@agent-saga/core';
import { createExecuteQueue } from '../src/queue/execute-queue.js';
import fixtureTools, { installFixtureTables } from '../../../test/fixtures/effect-tools.js';

/** Lag of the `laggy_note` tool's search index: a "not found" within it proves nothing. */
export const LAGGY_LOOKUP_LAG_MS = 60_000;

export interface ApiHarness {
  readonly env: TestEnv;
  readonly app: ApiApp;
  /** The API's metrics (served by `bin/api.ts` on the role's own listener, not on the app's port). */
  readonly metrics: ApiMetrics;
  readonly queue: Queue<ExecuteJob>;
  readonly config: Readonly<DispatcherConfig>;
  readonly tools: readonly AnyTool[];
  /** Token of tenant `t1` and of tenant `t2`. */
  readonly token: { readonly t1: string; readonly t2: string };
  readonly raw: Kysely<unknown>;
  waiter(): SettleWaiter;
  close(): Promise<void>;
}

export async function startApiHarness(label: string, env: Record<string, string> = {}): Promise<ApiHarness> {
  const testEnv = await createTestEnv(label);
  try {
    return await buildHarness(testEnv, label, env);
  } catch (err) {
    await testEnv.close();
    throw err;
  }
}

async function buildHarness(
  testEnv: TestEnv,
  label: string,
  env: Record<string, string>,
): Promise<ApiHarness> {
  // The fixture tools open their own pool on the test file's schema.
  process.env.SAGA_DB_SCHEMA = testEnv.schema;
  const raw = testEnv.db as unknown as Kysely<unknown>;
  await installFixtureTables(raw);
  const tools = [...(fixtureTools as AnyTool[]), laggyNote(raw), addComment(raw)];
  const config = loadDispatcherConfig({
    ...testEnv.env,
    SAGA_TOOLS: 'test/fixtures/effect-tools.ts',
    SAGA_FAST_PATH: 'false',
    CALL_WAIT_DEFAULT_MS: '1',
    LOOKUP_RECHECK_MS: '50',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const queue = createExecuteQueue(bullmqConnection(testEnv.redisUrl), testEnv.queuePrefix);
  const logger = createLogger({ level: config.LOG_LEVEL, name: `api-test-${label}` });
  const { app, waiter, metrics } = await buildApi({
    db: testEnv.db,
    schema: testEnv.schema,
    registry: createToolRegistry(tools),
    queue,
    config,
    logger,
  });
  await app.ready();
  const token = {
    t1: await createApiToken(testEnv.db, { tenantId: 't1', role: 'agent' }),
    t2: await createApiToken(testEnv.db, { tenantId: 't2', role: 'agent' }),
  };
  return {
    env: testEnv,
    app,
    metrics,
    queue,
    config,
    tools,
    token,
    raw,
    waiter: () => waiter,
    async close() {
      await app.close();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await testEnv.close();
    },
  };
}

/** A compensatable tool whose lookup lags {@link LAGGY_LOOKUP_LAG_MS} behind its effects. */
function laggyNote(raw: Kysely<unknown>): AnyTool {
  const lookup = async (key: string): Promise<ToolEffect | null> => {
    const r = await sql<{ id: string }>`SELECT id FROM fixture_effects WHERE key = ${key}`.execute(raw);
    const row = r.rows[0];
    return row ? { externalRef: `FX-${row.id}`, result: { id: `FX-${row.id}` } } : null;
  };
  return defineTool({
    name: 'laggy_note',
    class: 'reversible',
    version: 1,
    args: z.object({ text: z.string() }),
    compensate: (_args, key) => ({ tool: 'delete_note', args: { note: { $ref: key }, reason: 'undo' } }),
    execute: async (args, ctx) => {
      const r = await sql<{ id: string }>`
        INSERT INTO fixture_effects (key, tool, args) VALUES (${ctx.idempotencyKey}, 'laggy_note', ${JSON.stringify(args)})
        RETURNING id`.execute(raw);
      return { externalRef: `FX-${r.rows[0]!.id}`, result: { id: `FX-${r.rows[0]!.id}` } };
    },
    lookup,
    lookupLagMs: LAGGY_LOOKUP_LAG_MS,
  }) as AnyTool;
}

/**
 * `add_comment`: `create_note`'s twin declared `repeatable` (a second comment on one order in one run is
 * legitimate), so a new step with the same identity as an earlier one is not refused as a duplicate.
 */
function addComment(raw: Kysely<unknown>): AnyTool {
  return defineTool({
    name: 'add_comment',
    class: 'compensatable',
    version: 1,
    args: z.object({ orderId: z.string().min(1), text: z.string() }),
    identity: ['orderId'],
    repeatable: true,
    compensate: (_args, key) => ({ tool: 'delete_note', args: { note: { $ref: key }, reason: 'undo' } }),
    execute: async (args, ctx) => {
      const r = await sql<{ id: string }>`
        INSERT INTO fixture_effects (key, tool, args) VALUES (${ctx.idempotencyKey}, 'add_comment', ${JSON.stringify(args)})
        RETURNING id`.execute(raw);
      return { externalRef: `FX-${r.rows[0]!.id}`, result: { id: `FX-${r.rows[0]!.id}` } };
    },
    lookup: async (key) => {
      const r = await sql<{ id: string }>`SELECT id FROM fixture_effects WHERE key = ${key}`.execute(raw);
      const row = r.rows[0];
      return row ? { externalRef: `FX-${row.id}`, result: { id: `FX-${row.id}` } } : null;
    },
  }) as AnyTool;
}

/** An authenticated JSON request. */
export async function request(
  h: ApiHarness,
  method: 'GET' | 'POST',
  url: string,
  body?: unknown,
  token: string | null = h.token.t1,
): Promise<{ status: number; body: Record<string, unknown> & { error?: Record<string, unknown> } }> {
  const res = await h.app.inject({
    method,
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
  });
  return { status: res.statusCode, body: res.json() };
}

export async function newRun(h: ApiHarness, runId: string, token = h.token.t1): Promise<void> {
  const r = await request(h, 'POST', '/v1/runs', { runId }, token);
  if (r.status !== 201) throw new Error(`run not created: ${r.status} ${JSON.stringify(r.body)}`);
}

export const call = (
  h: ApiHarness,
  runId: string,
  body: { tool: string; args: Record<string, unknown>; stepIdx?: number; waitMs?: number },
  token?: string,
) => request(h, 'POST', `/v1/runs/${runId}/calls`, body, token);

export async function stepAt(h: ApiHarness, runId: string, stepIdx: number): Promise<StepRow | undefined> {
  return h.env.db
    .selectFrom('saga_log')
    .selectAll()
    .where('run_id', '=', runId)
    .where('step_idx', '=', stepIdx)
    .executeTakeFirst();
}

export async function countRows(
  h: ApiHarness,
  table: 'saga_log' | 'outbox' | 'step_events',
  runId: string,
): Promise<number> {
  let q = h.env.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('run_id', '=', runId);
  // Steps' events only: the run's own events (created, status changes) have no step.
  if (table === 'step_events') q = q.where(sql.ref('step_idx'), 'is not', null);
  const r = await q.executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * Plays the executor for one step: claims it (lease, attempt), optionally runs the real tool (an effect in
 * `fixture_effects`), and records `to`. `effect: false` records UNKNOWN or CONFIRMED without an effect.
 */
export async function executeStep(
  h: ApiHarness,
  runId: string,
  stepIdx: number,
  opts: {
    to: 'CONFIRMED' | 'FAILED' | 'UNKNOWN' | 'crash';
    effect?: boolean;
    leaseMs?: number;
    attemptAgoMs?: number;
  },
): Promise<StepRow> {
  const leaseMs = opts.leaseMs ?? 30_000;
  const claimed = await sql<StepRow>`
    UPDATE saga_log SET attempts = attempts + 1, lease_owner = 'test-executor',
           lease_until = now() + make_interval(secs => ${leaseMs / 1000}),
           last_attempt_at = now() - make_interval(secs => ${(opts.attemptAgoMs ?? 0) / 1000})
     WHERE run_id = ${runId} AND step_idx = ${stepIdx} AND status = 'INTENDED'
    RETURNING *`.execute(h.env.db);
  const step = claimed.rows[0];
  if (!step) throw new Error(`step ${stepIdx} is not INTENDED`);
  let effect: ToolEffect | null = null;
  if (opts.effect !== false && opts.to !== 'FAILED') {
    const tool = h.tools.find((t) => t.name === step.tool)!;
    effect = await tool.execute(step.args, {
      idempotencyKey: step.idempotency_key,
      runId,
      stepIdx,
      tenantId: step.tenant_id,
      attempt: step.attempts,
      signal: new AbortController().signal,
      logger: createLogger({ level: 'silent', name: 'x' }),
    });
  }
  if (opts.to === 'crash') return step;
  return h.env.db.transaction().execute((trx) =>
    transitionStep(trx, {
      runId,
      stepIdx,
      to: StepStatus[opts.to as 'CONFIRMED' | 'FAILED' | 'UNKNOWN'],
      cause: 'test executor',
      leaseOwner: 'test-executor',
      schema: h.env.schema,
      patch:
        opts.to === 'CONFIRMED'
          ? {
              external_ref: effect?.externalRef ?? 'EXT-1',
              result: JSON.stringify(effect?.result ?? { ok: true }),
              lease_until: null,
              lease_owner: null,
            }
          : opts.to === 'FAILED'
            ? {
                error: JSON.stringify({ code: 'CLIENT_ERROR', message: 'no' }),
                lease_until: null,
                lease_owner: null,
              }
            : { lease_until: null, lease_owner: null },
    }),
  );
}
