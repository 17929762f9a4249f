import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { createDb, type SagaDb } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';

export { dumpSchema } from './dump-schema.js';
export { backdateStepEvents } from './backdate-step-events.js';
export { migrateCoreTo } from '../db/migrate.js';
export { dropQueues } from './drop-queues.js';
export { installInMemoryTracing, type InMemoryTracing } from './in-memory-tracing.js';
export {
  explainGroupPool,
  wholeReads,
  type ExplainedGroupPool,
  type PlanNode,
} from './explain-group-plans.js';

/**
 * Test isolation on real Postgres and Redis: each test file gets its own schema and its own BullMQ prefix,
 * so files run in parallel against one server. Reads DATABASE_URL and REDIS_URL; without them, starts
 * containers when a Docker engine exists, and otherwise fails saying what to set.
 */
export interface TestEnv {
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly schema: string;
  readonly queuePrefix: string;
  readonly db: SagaDb;
  /** Environment for child processes of this test file (services started as real processes). */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

export async function resolveServiceUrls(): Promise<{ databaseUrl: string; redisUrl: string }> {
  const databaseUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (databaseUrl && redisUrl) return { databaseUrl, redisUrl };
  const { startContainers } = await import('./containers.js');
  return startContainers({ databaseUrl, redisUrl });
}

export async function createTestEnv(label = 't'): Promise<TestEnv> {
  const { databaseUrl, redisUrl } = await resolveServiceUrls();
  const suffix = randomBytes(4).toString('hex');
  const schema = `test_${label.replace(/[^a-z0-9_]/g, '_').slice(0, 30)}_${suffix}`;
  const queuePrefix = `test-${label}-${suffix}`;
  const db = createDb({ url: databaseUrl, schema, poolSize: 10, applicationName: 'agent-saga-test' });
  await migrateToLatest(db, schema);
  return {
    databaseUrl,
    redisUrl,
    schema,
    queuePrefix,
    db,
    env: {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      SAGA_DB_SCHEMA: schema,
      SAGA_QUEUE_PREFIX: queuePrefix,
    },
    async close() {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
      await db.destroy();
    },
  };
}
