/**
 * No intent is stranded (issue 9, item 2), with every role a real process on real Postgres and Redis:
 * - a job lost after its publish (every key of the test's BullMQ prefix deleted, as a Redis restarted
 *   without persistence leaves it) is published again under a fresh job id, by the core operation and by
 *   the reconciler's own timer (which outlives the loss of its BullMQ schedulers), and runs exactly once;
 *   the old job id, added again afterwards, runs nothing;
 * - a claim that fails on a database error (its backend terminated while it waits for a row lock) is
 *   retried by the executor, and the step runs once.
 */
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bullmqConnection,
  REPUBLISH_CAUSE,
  republishUnclaimedIntents,
  StepEventKind,
  StepStatus,
  type ExecuteJob,
} from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { createExecuteQueue, publishExecute } from '@agent-saga/dispatcher';
import { createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { effectsFor } from './fixtures/effect-tools.js';
import {
  createIntent,
  eventsOf,
  killAll,
  readStep,
  startRole,
  waitFor,
  waitForStatus,
  type RoleProcess,
} from './fixtures/dispatcher-processes.js';

let env: TestEnv;
let fx: Kysely<unknown>;
let queue: Queue<ExecuteJob>;
const procs: RoleProcess[] = [];
const ROLE_ENV = { FIXTURE_TOOL_TIMEOUT_MS: '1000' };

const start = (role: 'relay' | 'executor' | 'reconciler', extra: Record<string, string> = {}) => {
  const p = startRole(env, role, { ...ROLE_ENV, ...extra });
  procs.push(p);
  return p;
};

/** What a Redis restarted without persistence leaves of this test's queues: nothing (its prefix only). */
async function loseEverythingInRedis(): Promise<void> {
  const redis = new Redis(env.redisUrl);
  try {
    for (let cursor = '0'; ;) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${env.queuePrefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    await redis.quit();
  }
}

/** Waits until the job `jobId` has left the queue (done and removed, or never there). */
async function waitJobGone(jobId: string): Promise<void> {
  await waitFor(`job ${jobId} processed`, async () => {
    const state = await queue.getJobState(jobId);
    return state === 'unknown' || state === 'completed' ? true : undefined;
  });
}

/** The running process of `role`, started if there is none. */
const running = (role: 'relay' | 'executor') =>
  procs.find((p) => p.role === role && p.child.exitCode === null && p.child.signalCode === null) ??
  start(role);

const attemptEvents = async (runId: string) =>
  (await eventsOf(env.db, runId, 0)).filter((e) => e.kind === StepEventKind.ATTEMPT);

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('unclaimed'));
  queue = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
});
afterAll(async () => {
  await killAll(procs);
  await queue?.close();
  await env?.close();
});

describe('a job lost after publish', () => {
  it('is published again under a fresh job id and claimed once; the old job id does nothing', async () => {
    const runId = 'lost-direct';
    const row = await createIntent(env, {
      runId,
      stepIdx: 0,
      tool: 'create_note',
      args: { orderId: runId, text: 'lost in redis' },
      unrelayed: true, // published (the test adds the job itself, as the relay would)
    });
    const key = row.idempotency_key;
    const first: ExecuteJob = { runId, stepIdx: 0, key, dispatchNo: 1 };
    await publishExecute(queue, key, first);
    expect(await queue.getJobState(key)).toBe('waiting');
    await loseEverythingInRedis();
    expect(await queue.getJobState(key)).toBe('unknown');

    // Nothing brings it back by itself: an executor and a relay see nothing to do.
    start('relay');
    start('executor');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await readStep(env.db, key)).toMatchObject({ status: StepStatus.INTENDED, attempts: 0 });

    const republished = await republishUnclaimedIntents(env.db, { olderThanMs: 1000, schema: env.schema });
    expect(republished).toEqual([expect.objectContaining({ key, dispatchNo: 2, jobId: `${key}-d2` })]);

    const done = await waitForStatus(env.db, key, [StepStatus.CONFIRMED, StepStatus.UNKNOWN]);
    expect(done).toMatchObject({ status: StepStatus.CONFIRMED, attempts: 1 });
    expect(await effectsFor(fx, key)).toHaveLength(1);
    const attempts = await attemptEvents(runId);
    expect(attempts.map((a) => (a.detail as { jobId: string }).jobId)).toEqual([`${key}-d2`]);

    // The lost job comes back late (a Redis restored from an old snapshot): its claim finds the step
    // settled and runs nothing.
    await publishExecute(queue, key, first);
    await waitJobGone(key);
    expect(await effectsFor(fx, key)).toHaveLength(1);
    expect(await readStep(env.db, key)).toMatchObject({ status: StepStatus.CONFIRMED, attempts: 1 });
    expect(await attemptEvents(runId)).toHaveLength(1);
  });

  it('is brought back by the reconciler, whose timer outlives the loss of its own schedulers', async () => {
    // The executors are down while Redis loses the job (a pause, then a Redis restart).
    await Promise.all(procs.filter((p) => p.role === 'executor').map((p) => p.stop()));
    running('relay');
    const runId = 'lost-reconciled';
    const row = await createIntent(env, {
      runId,
      stepIdx: 0,
      tool: 'create_note',
      args: { orderId: runId, text: 'lost again' },
      unrelayed: true,
    });
    const key = row.idempotency_key;
    await publishExecute(queue, key, { runId, stepIdx: 0, key, dispatchNo: 1 });
    const reconciler = start('reconciler', {
      RECONCILER_SWEEP_MS: '200',
      SAGA_UNCLAIMED_REPUBLISH_MS: '1500',
      LOOKUP_RECHECK_MS: '300',
      DB_POOL_SIZE: '4',
    });
    await waitFor('reconciler started', () =>
      reconciler.output().includes('"msg":"reconciler started"') ? true : undefined,
    );
    await loseEverythingInRedis(); // the execute job and the reconciler's sweep and scan schedulers

    // Republished by the reconciler, then published by the relay under the fresh id.
    const msg = await waitFor('republished message published', async () => {
      const m = await env.db
        .selectFrom('outbox')
        .selectAll()
        .where('idempotency_key', '=', key)
        .where('job_id', '=', `${key}-d2`)
        .where('published_at', 'is not', null)
        .executeTakeFirst();
      return m;
    });
    expect(msg.payload).toMatchObject({ dispatchNo: 2 });
    // The reconciler logs after its transaction commits; the relay may publish the row before that line.
    await waitFor('the republish logged', () =>
      reconciler.output().includes('unclaimed intent republished under a fresh job id') ? true : undefined,
    );
    expect((await eventsOf(env.db, runId, 0)).filter((e) => e.cause === REPUBLISH_CAUSE)).toHaveLength(1);

    // Until an executor is back the step is republished every bound (one message per bound, never two).
    start('executor');
    const done = await waitForStatus(env.db, key, [StepStatus.CONFIRMED, StepStatus.UNKNOWN]);
    expect(done).toMatchObject({ status: StepStatus.CONFIRMED, attempts: 1 });
    expect(await effectsFor(fx, key)).toHaveLength(1);
    const messages = () =>
      env.db.selectFrom('outbox').select('job_id').where('idempotency_key', '=', key).orderBy('id').execute();
    const sent = await messages();
    expect(sent.map((m) => m.job_id)).toEqual(sent.map((_, i) => (i === 0 ? key : `${key}-d${i + 1}`)));
    // Every job delivered after the claim found the step taken: one attempt, one effect.
    await Promise.all(sent.map((m) => waitJobGone(m.job_id)));
    expect(await attemptEvents(runId)).toHaveLength(1);
    expect(await effectsFor(fx, key)).toHaveLength(1);
    // Claimed: the reconciler republishes it no more.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await messages()).toHaveLength(sent.length);
    await reconciler.stop();
    expect(reconciler.child.exitCode).toBe(0);
  });
});

describe('a failing claim', () => {
  it('is retried: the claim cut by a terminated backend runs again, and the step executes once', async () => {
    const runId = 'claim-fails';
    running('relay');
    const executor = running('executor');
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holderPid = 0;
    // The intent is written unpublished and the relay publishes it at its next poll; meanwhile the test
    // takes the step's row lock, so the executor's claim waits on it.
    const row = await createIntent(env, {
      runId,
      stepIdx: 0,
      tool: 'create_note',
      args: { orderId: runId, text: 'claim me twice' },
      fastPathGraceMs: 300,
    });
    const key = row.idempotency_key;
    const locker = env.db.transaction().execute(async (trx) => {
      await sql`SELECT 1 FROM saga_log WHERE idempotency_key = ${key} FOR UPDATE`.execute(trx);
      holderPid = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx)).rows[0]!.pid;
      await released;
    });

    try {
      // The relay publishes the job; the executor's claim blocks on the lock. Cut its connection.
      const blocked = await waitFor('a claim waiting on the row lock', async () => {
        const r = await sql<{ pid: number }>`
          SELECT pid FROM pg_stat_activity WHERE ${holderPid} = ANY(pg_blocking_pids(pid))`.execute(env.db);
        return r.rows[0]?.pid;
      });
      await sql`SELECT pg_terminate_backend(${blocked})`.execute(env.db);
      await waitFor('the claim failure logged', () =>
        executor.output().includes('claim failed; job retried') ? true : undefined,
      );
    } finally {
      release();
      await locker;
    }

    const done = await waitForStatus(env.db, key, [StepStatus.CONFIRMED, StepStatus.UNKNOWN]);
    expect(done).toMatchObject({ status: StepStatus.CONFIRMED, attempts: 1 });
    expect(await effectsFor(fx, key)).toHaveLength(1);
    expect(await attemptEvents(runId)).toHaveLength(1);
    expect(executor.child.exitCode).toBeNull(); // the executor outlived the cut connection
  });
});
