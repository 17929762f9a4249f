/**
 * A role started while Postgres cannot be reached (restarting, not up yet) waits for it instead of exiting
 * (`openSagaDb` with `PG_START_WAIT_MS`, and `listenChannel`'s first LISTEN), while a schema at a version
 * this build does not know still fails at once. "Postgres coming up" is a TCP proxy in front of the real
 * server that starts listening only after a delay, so the port refuses connections until then.
 */
import { connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  listenChannel,
  openSagaDb,
  SchemaVersionMismatchError,
  type SagaDbConfig,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';

let env: TestEnv;
const servers: Server[] = [];

beforeAll(async () => {
  env = await createTestEnv('startwait');
});
afterAll(async () => {
  for (const s of servers) s.close();
  await env?.close();
});

/** Starts proxying `port` → the real Postgres after `delayMs`; until then the port refuses connections. */
function postgresComingUpAfter(port: number, delayMs: number): Promise<void> {
  const real = new URL(env.databaseUrl);
  return new Promise((resolve) => {
    setTimeout(() => {
      const server = createServer((client) => {
        const upstream = connect(Number(real.port || 5432), real.hostname);
        client.pipe(upstream).pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
      }).listen(port, '127.0.0.1', () => resolve());
      servers.push(server);
    }, delayMs);
  });
}

function configFor(port: number, schema: string, startWaitMs: number): SagaDbConfig {
  const url = new URL(env.databaseUrl);
  url.port = String(port);
  return {
    DATABASE_URL: url.toString(),
    SAGA_DB_SCHEMA: schema,
    PG_CONNECT_TIMEOUT_MS: 1_000,
    PG_STATEMENT_TIMEOUT_MS: 30_000,
    PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: 60_000,
    PG_APPLICATION_NAME: 'agent-saga-test',
    PG_START_WAIT_MS: startWaitMs,
  };
}

describe('a role started before Postgres is up', () => {
  it('waits for Postgres, then opens its pool and its LISTEN session', async () => {
    const port = await freePort();
    const up = postgresComingUpAfter(port, 2_500);
    const started = Date.now();
    const { db, dbOptions } = await openSagaDb(configFor(port, env.schema, 20_000), 'test', 2);
    const waited = Date.now() - started;
    await up;
    // It really waited for the proxy (the port refused connections for 2.5 s), and then came up.
    expect(waited).toBeGreaterThanOrEqual(2_000);
    const listener = await listenChannel({ db: dbOptions, channel: 'start_wait_test', onNotify: () => {} });
    await listener.stop();
    await db.destroy();
  });

  it('gives up after PG_START_WAIT_MS when Postgres never comes', async () => {
    const port = await freePort();
    const started = Date.now();
    await expect(openSagaDb(configFor(port, env.schema, 2_000), 'test', 2)).rejects.toThrow(/ECONNREFUSED/);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(2_000);
    expect(waited).toBeLessThan(6_000);
  });

  it('never waits for a schema at an unknown version', async () => {
    const real = new URL(env.databaseUrl);
    const started = Date.now();
    await expect(
      openSagaDb(configFor(Number(real.port || 5432), 'no_such_schema_here', 30_000), 'test', 2),
    ).rejects.toBeInstanceOf(SchemaVersionMismatchError);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
