/**
 * Every wait for Postgres is bounded, and a lost connection is survived, at the pool itself (`createDb`):
 * the sessions carry the statement and idle-in-transaction timeouts; a transaction left open is ended by
 * the server; a connect to a server that never answers fails within its bound; an idle connection whose
 * backend is terminated is reported to `onPoolError` (never thrown) and the next query gets a new one;
 * a burst larger than the pool waits for it rather than failing on the connect bound. Plus the readiness
 * probe, bounded while a dependency hangs.
 */
import { createServer, type Server } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkReadiness,
  createDb,
  postgresProbe,
  WaitTimeoutError,
  withinMs,
  type SagaDb,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';

let env: TestEnv;
const opened: SagaDb[] = [];
let silent: Server;
let silentPort: number;

beforeAll(async () => {
  env = await createTestEnv('boundedwaits');
  // Accepts TCP connections and never answers: a Postgres that hangs mid-handshake.
  silent = createServer(() => {}).listen(0, '127.0.0.1');
  await new Promise((r) => silent.once('listening', r));
  silentPort = (silent.address() as { port: number }).port;
});
afterAll(async () => {
  await Promise.all(opened.map((d) => d.destroy().catch(() => {})));
  silent?.close();
  await env?.close();
});

function open(opts: Partial<Parameters<typeof createDb>[0]> = {}): SagaDb {
  const db = createDb({ url: env.databaseUrl, schema: env.schema, poolSize: 2, ...opts });
  opened.push(db);
  return db;
}

describe('bounded Postgres waits', () => {
  it('sets statement_timeout and idle_in_transaction_session_timeout on every session, 0 switching them off', async () => {
    const db = open({ statementTimeoutMs: 12_345, idleInTransactionTimeoutMs: 23_456 });
    const r = await sql<{ s: string; i: string }>`
      SELECT current_setting('statement_timeout') AS s,
             current_setting('idle_in_transaction_session_timeout') AS i`.execute(db);
    expect(r.rows[0]).toEqual({ s: '12345ms', i: '23456ms' });

    const off = open({ statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 });
    const o = await sql<{ s: string; i: string }>`
      SELECT current_setting('statement_timeout') AS s,
             current_setting('idle_in_transaction_session_timeout') AS i`.execute(off);
    expect(o.rows[0]).toEqual({ s: '0', i: '0' });

    await expect(sql`SELECT pg_sleep(1)`.execute(open({ statementTimeoutMs: 200 }))).rejects.toThrow(
      /statement timeout/,
    );
  });

  it('ends a transaction left idle past its bound, releasing what it held', async () => {
    const db = open({ idleInTransactionTimeoutMs: 300 });
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`SELECT 1`.execute(trx);
        await new Promise((r) => setTimeout(r, 1_000)); // a process that hangs while holding the transaction
        await sql`SELECT 1`.execute(trx);
      }),
    ).rejects.toThrow();
    // The pool goes on with a new connection.
    expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(db)).rows).toEqual([{ one: 1 }]);
  });

  it('fails a connect to a server that never answers within its bound', async () => {
    const db = createDb({
      url: `postgres://u:p@127.0.0.1:${silentPort}/x`,
      schema: 'saga',
      connectTimeoutMs: 500,
    });
    opened.push(db);
    const t0 = Date.now();
    await expect(sql`SELECT 1`.execute(db)).rejects.toThrow();
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('reports an idle connection whose backend was terminated, never throws it, and carries on', async () => {
    const errors: Error[] = [];
    const appName = `bw-${env.schema}`.slice(0, 60);
    const db = open({ applicationName: appName, onPoolError: (err) => errors.push(err) });
    await sql`SELECT 1`.execute(db); // one idle connection now sits in the pool
    const killed = await sql<{ n: number }>`
      SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
       WHERE application_name = ${appName}`.execute(env.db);
    expect(killed.rows[0]!.n).toBe(1);
    await withinMs(
      (async () => {
        while (errors.length === 0) await new Promise((r) => setTimeout(r, 20));
      })(),
      5_000,
      'pool error',
    );
    expect(errors[0]!.message).toMatch(/terminat/i);
    expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(db)).rows).toEqual([{ one: 1 }]);
  });

  it('lets a burst larger than the pool wait for a free connection, past the connect bound', async () => {
    const db = open({ poolSize: 1, connectTimeoutMs: 300 });
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 4 }, () => sql`SELECT pg_sleep(0.2)`.execute(db)));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(700);
  });
});

describe('readiness', () => {
  it('answers within its bound when a dependency hangs, naming it', async () => {
    const hung = createDb({
      url: `postgres://u:p@127.0.0.1:${silentPort}/x`,
      schema: 'saga',
      connectTimeoutMs: 3_000,
    });
    opened.push(hung);
    const t0 = Date.now();
    const r = await checkReadiness(
      { database: postgresProbe(open()), hung: postgresProbe(hung), redis: () => new Promise(() => {}) },
      500,
    );
    expect(Date.now() - t0).toBeLessThan(1_500);
    expect(r.status).toBe('unready');
    expect(r.checks.database).toEqual({ ok: true });
    expect(r.checks.hung?.ok).toBe(false);
    expect(r.checks.redis?.detail).toMatch(/500 ms/);
  });

  it('withinMs rejects with WaitTimeoutError once the bound passes', async () => {
    await expect(withinMs(new Promise(() => {}), 50, 'a hung add')).rejects.toBeInstanceOf(WaitTimeoutError);
    await expect(withinMs(Promise.resolve(7), 50, 'a quick add')).resolves.toBe(7);
  });
});
