/**
 * The outbox relay as real processes: woken by NOTIFY, it adds one BullMQ job per outbox row (jobId = the
 * row's job id) and marks the row; several relays share the work; with the API's fast path on it leaves
 * fresh rows alone for RELAY_GRACE_MS. No executor runs here, so the jobs stay in the queue to be counted.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Queue } from 'bullmq';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import {
  createIntent,
  killAll,
  startRole,
  waitFor,
  type RoleProcess,
} from '../../../test/fixtures/dispatcher-processes.js';
import { bullmqConnection, type ExecuteJob } from '@agent-saga/core';
import { createExecuteQueue } from '../src/queue/execute-queue.js';

let env: TestEnv;
let queue: Queue<ExecuteJob>;
let procs: RoleProcess[] = [];

beforeAll(async () => {
  env = await createTestEnv('relay');
  queue = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
});
afterEach(async () => {
  await killAll(procs);
  procs = [];
});
afterAll(async () => {
  await queue?.close();
  await env?.close();
});

async function unpublished(): Promise<number> {
  const r = await env.db
    .selectFrom('outbox')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('published_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

describe('outbox relay', () => {
  it('publishes a committed intent on NOTIFY, long before its fallback poll, with jobId = key', async () => {
    procs.push(startRole(env, 'relay', { RELAY_POLL_MS: '60000' }));
    await waitFor('relay start', () => (procs[0]!.output().includes('relay started') ? true : undefined));
    const t0 = Date.now();
    const row = await createIntent(env, {
      runId: 'run-notify',
      stepIdx: 0,
      tool: 'create_note',
      args: { orderId: '1', text: 'a' },
    });
    const job = await waitFor(
      'job in queue',
      async () => (await queue.getJob(row.idempotency_key)) ?? undefined,
    );
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(job.data).toEqual({
      runId: 'run-notify',
      stepIdx: 0,
      key: row.idempotency_key,
      dispatchNo: 1,
      // The step's stored trace context, as the outbox row carries it (migration 0019).
      traceparent: `00-${row.trace_id!.toString('hex')}-${row.span_id!.toString('hex')}-01`,
    });
    await waitFor('row marked', async () => ((await unpublished()) === 0 ? true : undefined));
    await procs[0]!.stop();
    expect((await procs[0]!.exited).code).toBe(0);
  });

  it('shares a burst between two relays: every row published and marked, one job per row', async () => {
    await queue.drain(true);
    procs.push(
      startRole(env, 'relay', { RELAY_BATCH_SIZE: '20' }),
      startRole(env, 'relay', { RELAY_BATCH_SIZE: '20' }),
    );
    const keys: string[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, r) => {
        for (let s = 0; s < 20; s++) {
          const row = await createIntent(env, {
            runId: `run-burst-${r}`,
            stepIdx: s,
            tool: 'create_note',
            args: { orderId: `${r}-${s}`, text: 'b' },
          });
          keys.push(row.idempotency_key);
        }
      }),
    );
    await waitFor('all rows marked', async () => ((await unpublished()) === 0 ? true : undefined));
    const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'active');
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(200);
    const jobs = await Promise.all(keys.map((k) => queue.getJob(k)));
    expect(jobs.every((j) => j !== undefined && j !== null)).toBe(true);
  });

  it('with the fast path on, leaves a fresh row to the API for RELAY_GRACE_MS, then sweeps it', async () => {
    procs.push(
      startRole(env, 'relay', { SAGA_FAST_PATH: 'true', RELAY_GRACE_MS: '1500', RELAY_POLL_MS: '200' }),
    );
    await waitFor('relay start', () => (procs[0]!.output().includes('relay started') ? true : undefined));
    const t0 = Date.now();
    const row = await createIntent(env, {
      runId: 'run-grace',
      stepIdx: 0,
      tool: 'create_note',
      args: { orderId: 'g', text: 'c' },
      fastPathGraceMs: 1_500,
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await queue.getJob(row.idempotency_key)).toBeUndefined();
    await waitFor('job in queue', async () => (await queue.getJob(row.idempotency_key)) ?? undefined);
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(1_400);
    expect(elapsed).toBeLessThan(3_500);
  });

  it('publishes at once a row nobody else publishes (a released commit step, a re-dispatch), fast path or not', async () => {
    procs.push(
      startRole(env, 'relay', { SAGA_FAST_PATH: 'true', RELAY_GRACE_MS: '5000', RELAY_POLL_MS: '10000' }),
    );
    await waitFor('relay start', () => (procs.at(-1)!.output().includes('relay started') ? true : undefined));
    const t0 = Date.now();
    const row = await createIntent(env, {
      runId: 'run-released',
      stepIdx: 0,
      tool: 'create_note',
      args: { orderId: 'r', text: 'c' },
    });
    await waitFor('job in queue', async () => (await queue.getJob(row.idempotency_key)) ?? undefined);
    expect(Date.now() - t0).toBeLessThan(1_000);
  });
});
