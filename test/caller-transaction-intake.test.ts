/**
 * Intents inside the caller's own transaction (`recordCallerIntent`): a Node backend on the same Postgres
 * writes its own row and the tool intent in one transaction of its own (its own Kysely, with a
 * CamelCasePlugin and its own search path, or a raw `pg` client), then commits or rolls back. The relay and
 * the executor run as real processes over the fixture tools, whose effects are counted in a table: a commit
 * gives one effect, a rollback none, a refusal leaves the caller's transaction usable with nothing written.
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { CamelCasePlugin, Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadRequestError,
  bindRun,
  BudgetExceededError,
  createRun,
  createToolRegistry,
  InvalidArgsError,
  recordCallerIntent,
  StepConflictError,
  stepKey,
  type CallerIntakeOptions,
  type CallerTransaction,
  type SagaDb,
} from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { closeFixtureTestEnv, createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import tools, { effectsFor } from './fixtures/effect-tools.js';
import {
  readStep,
  REPO_ROOT,
  startRole,
  TEST_ROLE_ENV,
  waitFor,
  type RoleProcess,
} from './fixtures/dispatcher-processes.js';

/** A `pg` client as `recordCallerIntent` takes it (pg's `ClientBase`), checked out of a pool. */
type PgPoolClient = Exclude<CallerTransaction, Transaction<unknown>> & { release(): void };
interface PgPool {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
}
/**
 * `pg` as core resolves it: the root workspace, where cross-service tests live, does not depend on `pg`
 * (core does; an agent backend brings its own), so it is loaded from core's dependencies.
 */
const { Pool } = createRequire(resolve(REPO_ROOT, 'packages/saga-core/package.json'))('pg') as {
  Pool: new (config: { connectionString: string; max: number; options: string }) => PgPool;
};

/** The caller's own database: one table in its own schema, camelCase in TypeScript. */
interface AppDb {
  orders: { orderId: string; state: string };
}

let env: TestEnv;
let fx: Kysely<unknown>;
let app: Kysely<AppDb>;
let appPool: PgPool;
let appSchema: string;
let opts: CallerIntakeOptions;
const procs: RoleProcess[] = [];
/** Longer than the relay's fallback poll (TEST_ROLE_ENV.RELAY_POLL_MS), three sweeps over. */
const PAST_RELAY_SWEEPS_MS = Number(TEST_ROLE_ENV.RELAY_POLL_MS) * 3 + 200;

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('caller_trx'));
  appSchema = `${env.schema}_app`;
  await sql`CREATE SCHEMA ${sql.id(appSchema)}`.execute(env.db);
  await sql`CREATE TABLE ${sql.id(appSchema, 'orders')} (order_id text PRIMARY KEY, state text NOT NULL)`.execute(
    env.db,
  );
  // The caller's pool knows nothing of the saga schema: its search path is its own.
  appPool = new Pool({
    connectionString: env.databaseUrl,
    max: 3,
    options: `-c search_path=${appSchema}`,
  });
  app = new Kysely<AppDb>({
    dialect: new PostgresDialect({ pool: appPool }),
    plugins: [new CamelCasePlugin()],
  });
  opts = { registry: createToolRegistry(tools), schema: env.schema };
  procs.push(startRole(env, 'relay'), startRole(env, 'executor'));
  // Started before any test commits, so that "nothing was sent" is measured against roles that run.
  for (const p of procs)
    await waitFor(
      `${p.role} started`,
      () => (p.output().includes(`"msg":"${p.role} started"`) ? true : undefined),
      50_000,
      100,
    );
});

afterAll(async () => {
  await app?.destroy();
  if (env) await sql`DROP SCHEMA IF EXISTS ${sql.id(appSchema)} CASCADE`.execute(env.db);
  await closeFixtureTestEnv(env, procs);
});

async function newRun(runId: string): Promise<string> {
  await createRun(env.db, { runId, tenantId: 'acme', metadata: {} });
  return runId;
}

/**
 * What the saga log holds for a run: steps, their events, and outbox messages not yet taken (by the keys its
 * first two `create_note` steps would have).
 */
async function sagaRowsOf(db: SagaDb, runId: string) {
  const steps = await db.selectFrom('saga_log').selectAll().where('run_id', '=', runId).execute();
  const events = await db
    .selectFrom('step_events')
    .select('kind')
    .where('run_id', '=', runId)
    .where('step_idx', 'is not', null) // the run's own creation event is not the intake's
    .execute();
  const outbox = await db
    .selectFrom('outbox')
    .select('idempotency_key')
    .where(
      'idempotency_key',
      'in',
      [0, 1].map((i) => stepKey(runId, i, 'create_note')),
    )
    .execute();
  return { steps, events, outbox };
}

async function orderState(orderId: string): Promise<string | undefined> {
  const row = await app
    .selectFrom('orders')
    .select('state')
    .where('orderId', '=', orderId)
    .executeTakeFirst();
  return row?.state;
}

function noteCall(runId: string, orderId: string, args: unknown = { orderId, text: `refund ${orderId}` }) {
  return { tenantId: 'acme', runId, tool: 'create_note', args, stepIdx: 0 };
}

describe('with a kysely transaction of the caller', () => {
  it('commits the caller row and the intent together: the relay and executor make exactly one effect', async () => {
    const runId = await newRun('ct-kysely-commit');
    const intent = await app.transaction().execute(async (trx) => {
      await trx.insertInto('orders').values({ orderId: 'o-1', state: 'refund requested' }).execute();
      const answer = await recordCallerIntent(trx, noteCall(runId, 'o-1'), opts);
      // The caller's search path is back: its own unqualified table resolves as before.
      await trx
        .updateTable('orders')
        .set({ state: 'refund intended' })
        .where('orderId', '=', 'o-1')
        .execute();
      return answer;
    });
    const key = stepKey(runId, 0, 'create_note');
    expect(intent).toEqual({
      stepIdx: 0,
      idempotencyKey: key,
      status: 'INTENDED',
      replayed: false,
      lookupDeferred: false,
    });
    expect(await orderState('o-1')).toBe('refund intended');
    const step = await waitFor(
      'step confirmed',
      async () => ((await readStep(env.db, key))?.status === 'CONFIRMED' ? readStep(env.db, key) : undefined),
      15_000,
      100,
    );
    expect(step?.external_ref).toMatch(/^FX-/);
    expect(await effectsFor(fx, key)).toHaveLength(1);

    // A retry in a later caller transaction is the same step, answered with its outcome; no second effect.
    const retry = await app
      .transaction()
      .execute((trx) => recordCallerIntent(trx, noteCall(runId, 'o-1'), opts));
    expect(retry).toMatchObject({ stepIdx: 0, idempotencyKey: key, status: 'CONFIRMED', replayed: true });
    await new Promise((r) => setTimeout(r, PAST_RELAY_SWEEPS_MS));
    expect(await effectsFor(fx, key)).toHaveLength(1);
  });

  it('rolled back, leaves no intent, outbox row, event, caller row or effect, even past relay sweeps', async () => {
    const runId = await newRun('ct-kysely-rollback');
    let seenInside: Awaited<ReturnType<typeof sagaRowsOf>> | undefined;
    await expect(
      app.transaction().execute(async (trx) => {
        await trx.insertInto('orders').values({ orderId: 'o-2', state: 'refund requested' }).execute();
        const answer = await recordCallerIntent(trx, noteCall(runId, 'o-2'), opts);
        expect(answer.status).toBe('INTENDED');
        // Inside the transaction the intent is there (so the rollback below has something to undo).
        seenInside = await sagaRowsOf(
          trx.withoutPlugins().withSchema(env.schema) as unknown as SagaDb,
          runId,
        );
        throw new Error('the caller changes its mind');
      }),
    ).rejects.toThrow('the caller changes its mind');
    expect(seenInside?.steps).toHaveLength(1);
    expect(seenInside?.outbox).toHaveLength(1);
    expect(seenInside?.events.length).toBeGreaterThan(0);

    await new Promise((r) => setTimeout(r, PAST_RELAY_SWEEPS_MS));
    expect(await sagaRowsOf(env.db, runId)).toEqual({ steps: [], events: [], outbox: [] });
    expect(await orderState('o-2')).toBeUndefined();
    expect(await effectsFor(fx, stepKey(runId, 0, 'create_note'))).toHaveLength(0);
  });

  it('refuses bad arguments naming the field, writes nothing, and the caller transaction goes on', async () => {
    const runId = await newRun('ct-kysely-bad-args');
    const errors = await app.transaction().execute(async (trx) => {
      await trx.insertInto('orders').values({ orderId: 'o-3', state: 'refund requested' }).execute();
      const badArgs = await recordCallerIntent(
        trx,
        noteCall(runId, 'o-3', { orderId: '', text: 'x' }),
        opts,
      ).catch((e: unknown) => e);
      const badDepends = await recordCallerIntent(
        trx,
        { ...noteCall(runId, 'o-3'), dependsOn: [0] },
        opts,
      ).catch((e: unknown) => e);
      // Still usable: the caller's own statement after the refusals runs and commits.
      await trx.updateTable('orders').set({ state: 'refund refused' }).where('orderId', '=', 'o-3').execute();
      return { badArgs, badDepends };
    });
    expect(errors.badArgs).toBeInstanceOf(InvalidArgsError);
    expect(errors.badArgs).toMatchObject({ code: 'INVALID_ARGS', field: 'args.orderId' });
    // `dependsOn` is checked under the run lock, after reads: the savepoint keeps the transaction clean.
    expect(errors.badDepends).toBeInstanceOf(BadRequestError);
    expect(errors.badDepends).toMatchObject({ code: 'BAD_REQUEST', field: 'dependsOn' });
    expect(await orderState('o-3')).toBe('refund refused');
    expect(await sagaRowsOf(env.db, runId)).toEqual({ steps: [], events: [], outbox: [] });
  });
});

describe('a governed run in the caller transaction', () => {
  it('is held to its budget by the same rules: the call past maxSteps is BUDGET_EXCEEDED and writes nothing', async () => {
    const runId = 'ct-kysely-budget';
    await createRun(env.db, {
      runId,
      tenantId: 'acme',
      metadata: {},
      binding: bindRun(undefined, { budget: { maxSteps: 1 } }),
    });
    const { first, second } = await app.transaction().execute(async (trx) => {
      const first = await recordCallerIntent(trx, noteCall(runId, 'o-9'), opts);
      const second = await recordCallerIntent(trx, { ...noteCall(runId, 'o-10'), stepIdx: 1 }, opts).catch(
        (e: unknown) => e,
      );
      return { first, second };
    });
    expect(first.status).toBe('INTENDED');
    expect(second).toBeInstanceOf(BudgetExceededError);
    expect(second).toMatchObject({ code: 'BUDGET_EXCEEDED', field: 'budget.maxSteps' });
    expect((await sagaRowsOf(env.db, runId)).steps.map((s) => s.step_idx)).toEqual([0]);
  });
});

describe('an irreversible tool in the caller transaction', () => {
  it('is held for a person: AWAITING_APPROVAL with its approval, committed with the caller row, nothing sent', async () => {
    const runId = await newRun('ct-kysely-held');
    const held = await app.transaction().execute(async (trx) => {
      await trx.insertInto('orders').values({ orderId: 'o-8', state: 'notice requested' }).execute();
      return recordCallerIntent(
        trx,
        {
          tenantId: 'acme',
          runId,
          tool: 'send_notice',
          args: { to: 'c@example.com', text: 'hi' },
          stepIdx: 0,
        },
        opts,
      );
    });
    expect(held).toMatchObject({ stepIdx: 0, status: 'AWAITING_APPROVAL', replayed: false });
    const approvals = await env.db
      .selectFrom('approvals')
      .select(['kind', 'status'])
      .where('run_id', '=', runId)
      .execute();
    expect(approvals).toEqual([{ kind: 'step', status: 'pending' }]);
    await new Promise((r) => setTimeout(r, PAST_RELAY_SWEEPS_MS));
    expect(await effectsFor(fx, held.idempotencyKey)).toHaveLength(0);
    expect(await orderState('o-8')).toBe('notice requested');
  });
});

describe('with a pg client on which the caller ran BEGIN', () => {
  it('commits with one effect, and a rollback leaves nothing', async () => {
    const runId = await newRun('ct-pg');
    const client = await appPool.connect();
    try {
      await client.query('BEGIN');
      await client.query('INSERT INTO orders (order_id, state) VALUES ($1, $2)', ['o-4', 'refund requested']);
      const intent = await recordCallerIntent(client, noteCall(runId, 'o-4'), opts);
      await client.query('UPDATE orders SET state = $1 WHERE order_id = $2', ['refund intended', 'o-4']);
      await client.query('COMMIT');
      expect(intent).toMatchObject({ stepIdx: 0, status: 'INTENDED', replayed: false });

      // A second step, in a transaction that rolls back.
      await client.query('BEGIN');
      const second = await recordCallerIntent(client, { ...noteCall(runId, 'o-5'), stepIdx: 1 }, opts);
      expect(second.status).toBe('INTENDED');
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    const key = stepKey(runId, 0, 'create_note');
    await waitFor(
      'step confirmed',
      async () => ((await readStep(env.db, key))?.status === 'CONFIRMED' ? true : undefined),
      15_000,
      100,
    );
    await new Promise((r) => setTimeout(r, PAST_RELAY_SWEEPS_MS));
    expect(await effectsFor(fx, key)).toHaveLength(1);
    expect(await effectsFor(fx, stepKey(runId, 1, 'create_note'))).toHaveLength(0);
    const rows = await sagaRowsOf(env.db, runId);
    expect(rows.steps.map((s) => s.step_idx)).toEqual([0]);
    expect(await orderState('o-4')).toBe('refund intended');
  });

  it('refuses a step conflict under the run lock and the transaction stays usable; refuses a client not in BEGIN', async () => {
    const runId = await newRun('ct-pg-refusals');
    const client = await appPool.connect();
    try {
      await client.query('BEGIN');
      await recordCallerIntent(client, noteCall(runId, 'o-6'), opts);
      const conflict = await recordCallerIntent(
        client,
        {
          tenantId: 'acme',
          runId,
          tool: 'send_notice',
          args: { to: 'ops@example.com', text: 'hi' },
          stepIdx: 0,
        },
        opts,
      ).catch((e: unknown) => e);
      expect(conflict).toBeInstanceOf(StepConflictError);
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM orders');
      expect(Number(rows[0]!.n)).toBeGreaterThanOrEqual(0);
      await client.query('ROLLBACK');

      const outside = await recordCallerIntent(client, noteCall(runId, 'o-7'), opts).catch((e: unknown) => e);
      expect(outside).toBeInstanceOf(BadRequestError);
      expect(outside).toMatchObject({ field: 'trx' });
    } finally {
      client.release();
    }
    expect(await sagaRowsOf(env.db, runId)).toEqual({ steps: [], events: [], outbox: [] });
  });
});
