/**
 * The run's cursor, computed from the delivered marks (`runs/run-cursor.ts`, migration 0024): the first
 * index from the stored floor on with no delivered step; the floor raised by the intakes (the grouped one
 * and the intake transaction) once a step is `CURSOR_FLOOR_LAG` past it, and only when the cursor moved;
 * migration 0024's down writes the cursor back into the column it renames.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { z } from 'zod';
import {
  createDb,
  createRun,
  createToolRegistry,
  CURSOR_FLOOR_LAG,
  defineTool,
  migrateToLatest,
  payloadHash,
  readRunCursor,
  recordCallerIntent,
  recordNewIntents,
  stepKey,
  StepStatus,
  type NewIntent,
  type SagaDb,
} from '@agent-saga/core';
import { createTestEnv, migrateCoreTo, type TestEnv } from '@agent-saga/core/testing';
import { MIGRATIONS } from '../src/db/migrations/index.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('runcursor');
});
afterAll(async () => env?.close());

const TENANT = 'acme';

const note = defineTool({
  name: 'note',
  class: 'reversible',
  version: 1,
  args: z.object({ n: z.number() }),
  identity: ['n'],
  compensate: () => ({ tool: 'note', args: { n: -1 } }),
  execute: () => Promise.resolve({ externalRef: 'N-1', result: {} }),
  lookup: () => Promise.resolve(null),
});
const registry = createToolRegistry([note]);

function intentOf(runId: string, stepIdx: number): NewIntent {
  const args = { n: stepIdx };
  return {
    runId,
    stepIdx,
    tenantId: TENANT,
    tool: 'note',
    toolClass: 'reversible',
    toolVersion: 1,
    idempotencyKey: stepKey(runId, stepIdx, 'note'),
    args,
    payloadHash: payloadHash('note', args),
    compensation: null,
    correction: null,
    audience: [],
    dependsOn: null,
    operation: null,
  };
}

/** A run whose steps `0 … n - 1` are written (grouped intake) and CONFIRMED, those in `delivered` delivered. */
async function runWith(db: SagaDb, runId: string, n: number, delivered: readonly number[]): Promise<void> {
  await createRun(db, { runId, tenantId: TENANT, metadata: {} });
  if (n === 0) return;
  const rows = await recordNewIntents(
    db,
    Array.from({ length: n }, (_, i) => intentOf(runId, i)),
    0,
  );
  expect(rows.every((r) => r !== null)).toBe(true);
  await sql`UPDATE saga_log SET status = ${StepStatus.CONFIRMED}, outcome_delivered = step_idx = ANY(${delivered}::int[])
             WHERE run_id = ${runId}`.execute(db);
}

/** The run's stored floor and its row's version (any write of the run changes `xmin`). */
async function stored(db: SagaDb, runId: string) {
  const r = await sql<{ floor: number; version: string }>`
    SELECT cursor_floor AS floor, xmin::text AS version FROM runs WHERE run_id = ${runId}`.execute(db);
  return r.rows[0]!;
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('the cursor', () => {
  it('is the first index from the floor on with no delivered step: a gap or a step owed to the caller', async () => {
    await runWith(env.db, 'c-none', 0, []);
    expect(await readRunCursor(env.db, 'c-none')).toBe(0);
    await runWith(env.db, 'c-holes', 6, [0, 1, 3, 4]);
    expect(await readRunCursor(env.db, 'c-holes')).toBe(2);
    await sql`UPDATE saga_log SET outcome_delivered = true WHERE run_id = 'c-holes' AND step_idx = 2`.execute(
      env.db,
    );
    expect(await readRunCursor(env.db, 'c-holes')).toBe(5);
    await runWith(env.db, 'c-all', 3, [0, 1, 2]);
    expect(await readRunCursor(env.db, 'c-all')).toBe(3);
    // From the floor on: a floor past undelivered steps is where the cursor starts.
    await sql`UPDATE runs SET cursor_floor = 4 WHERE run_id = 'c-all'`.execute(env.db);
    expect(await readRunCursor(env.db, 'c-all')).toBe(4);
    expect(await readRunCursor(env.db, 'c-missing')).toBeUndefined();
  });

  it('the grouped intake raises the floor once a step is CURSOR_FLOOR_LAG past it, and only if the cursor moved', async () => {
    const lag = CURSOR_FLOOR_LAG;
    await runWith(env.db, 'c-raise', lag, range(0, lag));
    const before = await stored(env.db, 'c-raise');
    expect(before.floor).toBe(0);
    // A step just short of the lag writes nothing of the run.
    await runWith(env.db, 'c-short', lag - 1, range(0, lag - 1));
    const short = await stored(env.db, 'c-short');
    expect(await recordNewIntents(env.db, [intentOf('c-short', lag - 1)], 0)).toHaveLength(1);
    expect(await stored(env.db, 'c-short')).toEqual(short);
    // At the lag: the floor becomes the cursor (every earlier step delivered).
    expect((await recordNewIntents(env.db, [intentOf('c-raise', lag)], 0))[0]).not.toBeNull();
    expect((await stored(env.db, 'c-raise')).floor).toBe(lag);
    expect(await readRunCursor(env.db, 'c-raise')).toBe(lag);
    // A step owed to the caller holds the cursor at 0: the run is not written, however far the intake goes.
    await runWith(env.db, 'c-held', lag, range(1, lag));
    const held = await stored(env.db, 'c-held');
    expect((await recordNewIntents(env.db, [intentOf('c-held', lag)], 0))[0]).not.toBeNull();
    expect((await recordNewIntents(env.db, [intentOf('c-held', lag + 1)], 0))[0]).not.toBeNull();
    expect(await stored(env.db, 'c-held')).toEqual(held);
    expect(await readRunCursor(env.db, 'c-held')).toBe(0);
  });

  it('an intake transaction at the cursor raises the floor too, and writes its step there', async () => {
    const lag = CURSOR_FLOOR_LAG;
    await runWith(env.db, 'c-caller', lag, range(0, lag));
    const intend = () =>
      env.db
        .transaction()
        .execute((trx) =>
          recordCallerIntent(
            trx,
            { tenantId: TENANT, runId: 'c-caller', tool: 'note', args: { n: 1000 } },
            { registry, schema: env.schema },
          ),
        );
    expect((await intend()).stepIdx).toBe(lag);
    expect((await stored(env.db, 'c-caller')).floor).toBe(lag);
  });
});

describe('migration 0024 down', () => {
  it('writes the cursor into the column it gives back its old name', async () => {
    const schema = `${env.schema}_down`;
    const db = createDb({ url: env.databaseUrl, schema });
    try {
      await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(db);
      await migrateToLatest(db, schema);
      await runWith(db, 'd', 4, [0, 1, 3]);
      const names = Object.keys(MIGRATIONS);
      const before = names[names.indexOf('0024_run_cursor_floor') - 1]!;
      expect((await migrateCoreTo(db, schema, before)).error).toBeUndefined();
      const r = await sql<{ cursor: number }>`SELECT cursor FROM runs WHERE run_id = 'd'`.execute(db);
      expect(r.rows[0]!.cursor).toBe(2);
      await migrateToLatest(db, schema);
      expect(await readRunCursor(db, 'd')).toBe(2);
      expect((await stored(db, 'd')).floor).toBe(2);
    } finally {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
      await db.destroy();
    }
  });
});
