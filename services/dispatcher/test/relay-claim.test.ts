/**
 * The relay's claim / publish / mark protocol (`publishOutboxBatch`) on real Postgres and BullMQ: no
 * transaction is open while it waits for Redis, a batch whose publish fails is given back at once, and a
 * claim left unmarked (a relay that died after publishing) keeps other relays off the rows until its lease
 * ends, after which they are published again, once in BullMQ.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queue } from 'bullmq';
import { sql } from 'kysely';
import {
  bullmqConnection,
  bullmqProducerConnection,
  createDb,
  createLogger,
  freePort,
  type SagaDb,
  type ExecuteJob,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { createIntent } from '../../../test/fixtures/dispatcher-processes.js';
import { createExecuteQueue } from '../src/queue/execute-queue.js';
import { claimOutboxRows } from '../src/relay/claim-outbox-rows.js';
import { publishOutboxBatch } from '../src/relay/publish-outbox-batch.js';

let env: TestEnv;
/** The relay's own pool, under an application_name of its own so its sessions can be watched. */
let relayDb: SagaDb;
let appName: string;
let queue: Queue<ExecuteJob>;
const logger = createLogger({ level: 'silent', name: 'relay-claim-test' });
const noCrash = (): void => {};

beforeAll(async () => {
  env = await createTestEnv('relayclaim');
  appName = `agent-saga-${env.schema}`.slice(0, 60);
  relayDb = createDb({ url: env.databaseUrl, schema: env.schema, poolSize: 2, applicationName: appName });
  queue = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
});
afterAll(async () => {
  await queue?.close();
  await relayDb?.destroy();
  await env?.close();
});

async function outboxOf(runId: string) {
  return env.db
    .selectFrom('outbox')
    .select(['published_at'])
    .select(sql<number>`(extract(epoch from relay_after - now()) * 1000)::float8`.as('due_in_ms'))
    .where('run_id', '=', runId)
    .executeTakeFirstOrThrow();
}

describe('relay claim, publish, mark', () => {
  it('holds no transaction while Redis does not answer, and gives the batch back when the bound passes', async () => {
    const row = await createIntent(env, {
      runId: 'run-claim-down',
      stepIdx: 0,
      tool: 'create_note',
      args: { orderId: 'd', text: 'redis down' },
    });
    // A producer queue on a port where nothing listens: it never connects, so its adds wait for ever.
    const deadQueue = createExecuteQueue(
      bullmqProducerConnection(`redis://127.0.0.1:${await freePort()}`),
      env.queuePrefix,
    );
    deadQueue.on('error', () => {});
    try {
      const t0 = Date.now();
      const batch = publishOutboxBatch(relayDb, deadQueue, {
        limit: 10,
        leaseMs: 30_000,
        publishTimeoutMs: 1_500,
        crash: noCrash,
        logger,
      });
      await new Promise((r) => setTimeout(r, 700));
      // Mid-publish: the rows are claimed, and no session of the relay sits in a transaction.
      const states = await sql<{ state: string | null }>`
        SELECT state FROM pg_stat_activity WHERE application_name = ${appName}`.execute(env.db);
      expect(states.rows.filter((s) => s.state?.startsWith('idle in transaction'))).toEqual([]);
      expect(await claimOutboxRows(env.db, { limit: 10, leaseMs: 30_000 })).toEqual([]);
      expect((await outboxOf('run-claim-down')).due_in_ms).toBeGreaterThan(20_000);

      const r = await batch;
      expect(Date.now() - t0).toBeLessThan(3_000);
      expect(r).toMatchObject({ published: 0, failed: 1 });
      // Given back: unpublished and due again now, not after the lease.
      const after = await outboxOf('run-claim-down');
      expect(after.published_at).toBeNull();
      expect(after.due_in_ms).toBeLessThanOrEqual(0);
      expect(await queue.getJob(row.idempotency_key)).toBeUndefined();
    } finally {
      await deadQueue.close();
    }

    // Redis reachable: the next batch publishes and marks it.
    const ok = await publishOutboxBatch(relayDb, queue, {
      limit: 10,
      leaseMs: 30_000,
      publishTimeoutMs: 4_000,
      crash: noCrash,
      logger,
    });
    expect(ok).toMatchObject({ published: 1, failed: 0 });
    expect((await outboxOf('run-claim-down')).published_at).not.toBeNull();
    expect(await queue.getJob(row.idempotency_key)).toBeDefined();
  });

  it('keeps an unmarked claim from other relays until its lease ends, then publishes it again once', async () => {
    const row = await createIntent(env, {
      runId: 'run-claim-lease',
      stepIdx: 0,
      tool: 'create_note',
      args: { orderId: 'l', text: 'died after publish' },
    });
    // A relay that "dies" between its adds and its mark: the crash point throws instead of killing.
    const died = publishOutboxBatch(relayDb, queue, {
      limit: 10,
      leaseMs: 1_500,
      publishTimeoutMs: 4_000,
      crash: () => {
        throw new Error('killed after publish');
      },
      logger,
    });
    await expect(died).rejects.toThrow('killed after publish');
    expect(await queue.getJob(row.idempotency_key)).toBeDefined();
    expect((await outboxOf('run-claim-lease')).published_at).toBeNull();

    // Another relay finds nothing while the lease holds…
    const during = await publishOutboxBatch(relayDb, queue, {
      limit: 10,
      leaseMs: 30_000,
      publishTimeoutMs: 4_000,
      crash: noCrash,
      logger,
    });
    expect(during.published).toBe(0);

    // …and takes the row again once it lapsed: published (a no-op in BullMQ) and marked.
    await new Promise((r) => setTimeout(r, 1_700));
    const again = await publishOutboxBatch(relayDb, queue, {
      limit: 10,
      leaseMs: 30_000,
      publishTimeoutMs: 4_000,
      crash: noCrash,
      logger,
    });
    expect(again.published).toBe(1);
    expect((await outboxOf('run-claim-lease')).published_at).not.toBeNull();
    const jobs = await queue.getJobs(['wait', 'prioritized', 'delayed', 'active']);
    expect(jobs.filter((j) => j.data.key === row.idempotency_key)).toHaveLength(1);
  });
});
