/**
 * Which compensator drives which run (`openRunLocks`), on real Postgres: a run's lock is held by one
 * session at a time, released by its holder or by the end of its session (a killed process, a failover),
 * and a reopened session never releases what its predecessor held.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { openRunLocks, type RunLocks } from '../src/index.js';

let env: TestEnv;
const opened: RunLocks[] = [];
const APP = `locks${process.pid}`;
beforeAll(async () => {
  env = await createTestEnv('comp_locks');
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.stop()));
});
afterAll(async () => env?.close());

const open = async (name: string, schema = env.schema, onReconnect?: () => void) => {
  const locks = await openRunLocks(schema, {
    db: { url: env.databaseUrl, schema, applicationName: `${APP}-${name}` },
    ...(onReconnect ? { onReconnect } : {}),
  });
  opened.push(locks);
  return locks;
};
const terminate = async (name: string) =>
  (
    await sql<{ n: number }>`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
       WHERE application_name = ${`${APP}-${name}-locks`}`.execute(env.db)
  ).rows[0]!.n;

describe('run locks', () => {
  it('one session holds a run at a time; released, the run can be taken by another', async () => {
    const a = await open('a1');
    const b = await open('b1');
    const got = await a.tryLock(['r1', 'r2']);
    expect([...got.locked].sort()).toEqual(['r1', 'r2']);
    expect((await b.tryLock(['r1', 'r2', 'r3'])).locked).toEqual(['r3']);
    await a.unlock(['r1'], got.generation);
    expect((await b.tryLock(['r1', 'r2'])).locked).toEqual(['r1']);
  });

  it("a holder's session ends (killed, failed over): its runs are free at once", async () => {
    const a = await open('a2');
    const b = await open('b2');
    await a.tryLock(['k1']);
    expect((await b.tryLock(['k1'])).locked).toEqual([]);
    expect(await terminate('a2')).toBe(1);
    await expect
      .poll(async () => (await b.tryLock(['k1'])).locked, { timeout: 5_000, interval: 50 })
      .toEqual(['k1']);
  });

  it('a reopened session is a new generation: nothing of the old one is released on it', async () => {
    let reopened = 0;
    const a = await open('a3', env.schema, () => reopened++);
    const b = await open('b3');
    const first = await a.tryLock(['g1']);
    expect(await terminate('a3')).toBe(1);
    await expect.poll(() => reopened, { timeout: 5_000, interval: 50 }).toBe(1);
    const second = await a.tryLock(['g2']);
    expect(second.generation).toBe(first.generation + 1);
    // g1 went with the old session; b takes it, and a's late release of g1 leaves b holding it.
    expect((await b.tryLock(['g1'])).locked).toEqual(['g1']);
    await a.unlock(['g1'], first.generation);
    expect((await a.tryLock(['g1'])).locked).toEqual([]);
  });

  it('takes and releases asked for together go one at a time on the session (no pg queueing)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const a = await open('a5');
      const first = await a.tryLock(['q1', 'q2']);
      const [taken] = await Promise.all([
        a.tryLock(['q3', 'q4']),
        a.unlock(['q1'], first.generation),
        a.tryLock(['q5']),
        a.unlock(['q2'], first.generation),
      ]);
      expect([...taken.locked].sort()).toEqual(['q3', 'q4']);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((m) => m.includes('already executing a query'))).toEqual([]);
      const b = await open('b5');
      expect([...(await b.tryLock(['q1', 'q2', 'q5'])).locked].sort()).toEqual(['q1', 'q2']);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('the same run id in two schemas is two locks', async () => {
    const other = await createTestEnv('comp_locks_other');
    try {
      const a = await open('a4');
      const b = await open('b4', other.schema);
      expect((await a.tryLock(['same'])).locked).toEqual(['same']);
      expect((await b.tryLock(['same'])).locked).toEqual(['same']);
    } finally {
      await other.close();
    }
  });
});
