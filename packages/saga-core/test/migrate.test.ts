import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertSchemaVersion,
  createDb,
  currentSchemaVersion,
  EXPECTED_SCHEMA_VERSION,
  migrateToLatest,
  ApprovalKind,
  ApprovalStatus,
  CorrectionStatus,
  ReviewStatus,
  RunStatus,
  SchemaVersionMismatchError,
  StepEventKind,
  StepStatus,
  valuesOf,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('migrate');
});
afterAll(async () => env?.close());

describe('migrations', () => {
  it('bring a schema to the version this build expects, and are a no-op the second time', async () => {
    expect(await currentSchemaVersion(env.db)).toBe(EXPECTED_SCHEMA_VERSION);
    expect(await migrateToLatest(env.db, env.schema)).toEqual([]);
    await expect(assertSchemaVersion(env.db)).resolves.toBeUndefined();
  });

  it('serialise when several processes migrate one fresh schema at once', async () => {
    const schema = `${env.schema}_race`;
    const dbs = [0, 1, 2].map(() => createDb({ url: env.databaseUrl, schema }));
    try {
      const results = await Promise.all(dbs.map((db) => migrateToLatest(db, schema)));
      // One migrator did all the work (every migration, once); the others found nothing left to do.
      const workers = results.filter((r) => r.some((m) => m.status === 'Success'));
      expect(workers).toHaveLength(1);
      expect(workers[0]!.at(-1)?.migrationName).toBe(EXPECTED_SCHEMA_VERSION);
      const applied = results
        .flat()
        .filter((m) => m.status === 'Success')
        .map((m) => m.migrationName);
      expect(new Set(applied).size).toBe(applied.length);
      expect(await currentSchemaVersion(dbs[0]!)).toBe(EXPECTED_SCHEMA_VERSION);
    } finally {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(dbs[0]!);
      await Promise.all(dbs.map((db) => db.destroy()));
    }
  });

  it('refuse an unmigrated schema and one from a newer build, by name', async () => {
    const blank = createDb({ url: env.databaseUrl, schema: `${env.schema}_blank` });
    try {
      await expect(assertSchemaVersion(blank)).rejects.toBeInstanceOf(SchemaVersionMismatchError);
    } finally {
      await blank.destroy();
    }
    await sql`INSERT INTO saga_migration (name, timestamp) VALUES ('9999_from_the_future', now())`.execute(
      env.db,
    );
    const err = await assertSchemaVersion(env.db).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaVersionMismatchError);
    expect((err as Error).message).toContain('9999_from_the_future');
    await sql`DELETE FROM saga_migration WHERE name = '9999_from_the_future'`.execute(env.db);
  });

  it('derive the status CHECK constraint from StepStatus', async () => {
    const r = await sql<{ def: string }>`
      SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
      JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = ${env.schema} AND t.relname = 'saga_log' AND pg_get_constraintdef(c.oid) LIKE '%status%INTENDED%'`.execute(
      env.db,
    );
    expect(r.rows).toHaveLength(1);
    const inDb = [...r.rows[0]!.def.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]).sort();
    expect(inDb).toEqual(valuesOf(StepStatus).sort());
  });

  it.each([
    ['approvals', 'status', valuesOf(ApprovalStatus)],
    ['approvals', 'kind', valuesOf(ApprovalKind)],
    ['corrections', 'status', valuesOf(CorrectionStatus)],
    ['cases', 'status', valuesOf(ReviewStatus)],
    ['step_events', 'kind', valuesOf(StepEventKind)],
    ['runs', 'status', valuesOf(RunStatus)],
  ] as const)('derive the CHECK of %s.%s from its status object', async (table, column, values) => {
    const r = await sql<{ def: string }>`
      SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
      JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = ${env.schema} AND t.relname = ${table} AND c.contype = 'c'
        AND c.conname = ${`${table}_${column}_check`}`.execute(env.db);
    expect(r.rows).toHaveLength(1);
    const inDb = [...r.rows[0]!.def.matchAll(/'([A-Za-z_]+)'/g)].map((m) => m[1]).sort();
    expect(inDb).toEqual([...values].sort());
  });

  it('keep one open case per step, while resolved cases stay as history', async () => {
    await sql`INSERT INTO runs (run_id, tenant_id, status) VALUES ('mc', 't', 'RUNNING')`.execute(env.db);
    const open = sql`INSERT INTO cases (run_id, step_idx, tenant_id, reason, status) VALUES ('mc', 1, 't', 'r', 'open')`;
    await open.execute(env.db);
    await expect(open.execute(env.db)).rejects.toThrow(/cases_one_open_per_step/);
    await sql`UPDATE cases SET status = 'resolved' WHERE run_id = 'mc'`.execute(env.db);
    await open.execute(env.db);
  });
});
