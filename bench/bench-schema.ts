import { sql } from 'kysely';
import { createApiToken, createDb, migrateToLatest, RunStatus, type SagaDb } from '@agent-saga/core';
import type { BenchConfig } from './bench-config.js';

/** The tenant every bench call belongs to. */
export const BENCH_TENANT = 'bench';

/**
 * The bench's own corner of the shared Postgres and Redis: a fresh schema `bench_<ts>` migrated to the
 * latest version, a BullMQ prefix `bench-<ts>`, and an agent token. `drop()` removes the schema.
 */
export interface BenchSchema {
  readonly schema: string;
  readonly queuePrefix: string;
  /** A small pool on the schema: counters, saga-log reads, setup. Never on the measured path. */
  readonly db: SagaDb;
  readonly token: string;
  drop(): Promise<void>;
}

export async function createBenchSchema(config: BenchConfig): Promise<BenchSchema> {
  const stamp = `${Date.now()}`;
  const migrated = await createMigratedSchema(config.DATABASE_URL, `bench_${stamp}`, {
    poolSize: 4,
    applicationName: 'agent-saga-bench',
  });
  const { schema, db } = migrated;
  const token = await createApiToken(db, { tenantId: BENCH_TENANT, role: 'agent', label: 'bench' });
  return { schema, queuePrefix: `bench-${stamp}`, db, token, drop: () => migrated.drop() };
}

/** A fresh schema migrated to the latest version and a pool on it; `drop()` removes the schema, closes the pool. */
export interface MigratedSchema {
  readonly schema: string;
  readonly db: SagaDb;
  drop(): Promise<void>;
}

/**
 * Creates `schema` with core's migrations (`migrateToLatest`) and a pool whose search_path is that schema.
 * If the migration fails, the schema is dropped again before the error is thrown.
 */
export async function createMigratedSchema(
  url: string,
  schema: string,
  pool: { readonly poolSize: number; readonly applicationName: string },
): Promise<MigratedSchema> {
  const db = createDb({ url, schema, ...pool });
  const drop = async () => {
    try {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
    } finally {
      await db.destroy();
    }
  };
  try {
    await migrateToLatest(db, schema);
  } catch (err) {
    // The migration's error is the one to report; a failed drop of the half-made schema would hide it.
    await drop().catch(() => {});
    throw err;
  }
  return { schema, db, drop };
}

/**
 * Creates `count` empty runs `<prefix>-<i>` in one statement, so the measured phases spend nothing on run
 * creation (an agent creates a run once and then makes many calls in it). The rows are what
 * `POST /v1/runs` writes for a new run.
 */
export async function createRuns(db: SagaDb, prefix: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (let i = 0; i < ids.length; i += 5_000)
    await db
      .insertInto('runs')
      .values(
        ids.slice(i, i + 5_000).map((runId) => ({
          run_id: runId,
          tenant_id: BENCH_TENANT,
          status: RunStatus.RUNNING,
          status_reason: null,
          metadata: '{}',
        })),
      )
      .execute();
  return ids;
}
