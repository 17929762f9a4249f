import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepSettledChannel } from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { createSettleWaiter, type SettleWaiter } from '../src/api/settle-waiter.js';

let env: TestEnv;
let waiter: SettleWaiter;
beforeAll(async () => {
  env = await createTestEnv('settle_waiter');
  waiter = createSettleWaiter({
    db: { url: env.databaseUrl, schema: env.schema, poolSize: 1 },
    logger: pino({ level: 'silent' }),
  });
  await waiter.start();
});
afterAll(async () => {
  await waiter?.close();
  await env?.close();
});

const notify = (key: string) =>
  sql`SELECT pg_notify(${stepSettledChannel(env.schema)}, ${key})`.execute(env.db);

describe('settle waiter', () => {
  it("wakes a key's watch on its NOTIFY, and a drain-only watch on none", async () => {
    const keyed = waiter.watch('k-1');
    const drainOnly = waiter.watchDrain();
    try {
      const keyedWake = keyed.next(5_000);
      const drainWake = drainOnly.next(400);
      await notify('k-1');
      await expect(keyedWake).resolves.toBe('notified');
      // The same NOTIFY (and one of another key) reached the session; the drain-only watch slept through both.
      await notify('k-2');
      await expect(drainWake).resolves.toBe('timeout');
    } finally {
      keyed.close();
      drainOnly.close();
    }
  });

  it('wakes a drain-only watch at once when the waiter drains, and every later one too', async () => {
    const w = createSettleWaiter({
      db: { url: env.databaseUrl, schema: env.schema, poolSize: 1 },
      logger: pino({ level: 'silent' }),
    });
    await w.start();
    try {
      const waiting = w.watchDrain();
      const wake = waiting.next(10_000);
      const t0 = Date.now();
      w.drain();
      await expect(wake).resolves.toBe('closed');
      expect(Date.now() - t0).toBeLessThan(1_000);
      await expect(w.watchDrain().next(10_000)).resolves.toBe('closed');
      waiting.close();
    } finally {
      await w.close();
    }
  });
});
