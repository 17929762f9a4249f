/**
 * The executors' autoscaling signal, end to end: intents written with no executor running are published by
 * a real relay, and its `/metrics` (behind METRICS_TOKEN, as in production) reports them in
 * `saga_execute_jobs_waiting`, the same number as BullMQ's wait list in Redis (the key KEDA's redis
 * scaler would read instead); once a real executor starts, the gauge falls to 0.
 */
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { EXECUTE_QUEUE } from '@agent-saga/dispatcher';
import {
  createIntent,
  killAll,
  startRole,
  waitFor,
  waitForStatus,
  type RoleProcess,
} from './fixtures/dispatcher-processes.js';
import { installFixtureTables } from './fixtures/effect-tools.js';

const TOKEN = 'scrape-token-0123456789';
const JOBS = 6;

let env: TestEnv;
let redis: Redis;
const procs: RoleProcess[] = [];
beforeAll(async () => {
  env = await createTestEnv('queue_gauge');
  await installFixtureTables(env.db as unknown as Kysely<unknown>);
  redis = new Redis(env.redisUrl);
});
afterAll(async () => {
  await killAll(procs);
  const keys = await redis.keys(`${env.queuePrefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  await env?.close();
});

/** One scrape of `name` (no labels but the role's) from the metrics listener at `port`. */
async function scrape(port: number, name: string): Promise<number | undefined> {
  const r = await fetch(`http://127.0.0.1:${port}/metrics`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
  const line = (await r.text()).split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('saga_execute_jobs_waiting', () => {
  it('counts the jobs no executor has taken, and falls to 0 once one consumes them', async () => {
    const port = await freePort();
    const relay = startRole(env, 'relay', { METRICS_PORT: String(port), METRICS_TOKEN: TOKEN });
    procs.push(relay);
    await waitFor('the relay metrics listener', () =>
      scrape(port, 'saga_execute_jobs_waiting').catch(() => undefined),
    );
    expect(await scrape(port, 'saga_execute_jobs_waiting')).toBe(0);
    expect(await scrape(port, 'saga_execute_jobs_delayed')).toBe(0);
    expect(await scrape(port, 'saga_execute_jobs_active')).toBe(0);
    // Without the bearer the listener refuses: the signal is read by a scraper that holds the token.
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);

    const keys: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const row = await createIntent(env, {
        runId: `gauge-run-${i}`,
        stepIdx: 0,
        tool: 'create_note',
        args: { orderId: `o-${i}`, text: 'queued' },
      });
      keys.push(row.idempotency_key);
    }
    const waiting = await waitFor('all jobs waiting', async () => {
      const n = await scrape(port, 'saga_execute_jobs_waiting');
      return n === JOBS ? n : undefined;
    });
    expect(waiting).toBe(JOBS);
    // The same count in Redis, under the key KEDA's redis list scaler would read: <prefix>:<queue>:wait.
    expect(await redis.llen(`${env.queuePrefix}:${EXECUTE_QUEUE}:wait`)).toBe(JOBS);

    const executor = startRole(env, 'executor');
    procs.push(executor);
    await waitFor(
      'the queue drained',
      async () => ((await scrape(port, 'saga_execute_jobs_waiting')) === 0 ? true : undefined),
      30_000,
    );
    // Drained because the jobs ran, not because they vanished: every step was executed.
    for (const key of keys) {
      const step = await waitForStatus(env.db, key, ['CONFIRMED']);
      expect(step.status).toBe('CONFIRMED');
    }
    expect(await redis.llen(`${env.queuePrefix}:${EXECUTE_QUEUE}:wait`)).toBe(0);
  });
});
