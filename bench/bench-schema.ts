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
  const schema = `bench_${stamp}`;
  const db = createDb({ url: config.DATABASE_URL, schema, poolSize: 4, applicationName: 'agent-saga-bench' });
  await migrateToLatest(db, schema);
  const token = await createApiToken(db, { tenantId: BENCH_TENANT, role: 'agent', label: 'bench' });
  return {
    schema,
    queuePrefix: `bench-${stamp}`,
    db,
    token,
    async drop() {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
      await db.destroy();
    },
  };
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
