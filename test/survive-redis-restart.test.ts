/**
 * Redis stopped under running api, relay and executor (each a real process, on a private `redis-server`
 * of this file, never the shared one), then started again empty on the same port:
 * - while it is down, a side-effecting call answers within its `waitMs` plus a small bound with
 *   `202 INTENDED` (the fast path gives up after FAST_PATH_PUBLISH_TIMEOUT_MS and leaves the row to the
 *   relay), and every role's `/readyz` answers 503 within its bound;
 * - once it is back, the relay publishes the row (the fast path never did), the step completes CONFIRMED
 *   with exactly one effect, every `/readyz` answers 200 again, and no role exited.
 * A second relay is sent SIGTERM while Redis is down: its drain ends (exit 0) within its bounds, since no
 * transaction waits on Redis and its publish is bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { createApiToken, freePort, StepStatus } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { effectsFor } from './fixtures/effect-tools.js';
import {
  killAll,
  readStep,
  startRole,
  waitFor,
  waitForStatus,
  type Role,
  type RoleProcess,
} from './fixtures/dispatcher-processes.js';
import { agentApi, exitedRoles, freePorts, readyz, waitForReadyz } from './fixtures/role-probes.js';

let env: TestEnv;
let fx: Kysely<unknown>;
let redisPort: number;
let redis: ChildProcess | undefined;
let procs: RoleProcess[] = [];
/** A relay that is drained while Redis is down. */
let drainedRelay: RoleProcess;
let api: ReturnType<typeof agentApi>;
const bases: Record<string, string> = {};

const ROLES = ['api', 'relay', 'executor'] as const satisfies readonly Role[];
/** The bound a call may take beyond its `waitMs` while Redis is down (the fast path's 500 ms, and slack). */
const CALL_BOUND_MS = 1_500;

/** Starts the private Redis on `redisPort`, empty, and waits until it accepts connections. */
async function startRedis(): Promise<void> {
  redis = spawn('redis-server', ['--port', String(redisPort), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  await waitFor('private redis up', async () => {
    const { createConnection } = await import('node:net');
    return new Promise<true | undefined>((res) => {
      const s = createConnection(redisPort, '127.0.0.1');
      s.once('connect', () => (s.destroy(), res(true)));
      s.once('error', () => res(undefined));
    });
  });
}

async function stopRedis(): Promise<void> {
  const r = redis;
  redis = undefined;
  if (!r || r.exitCode !== null) return;
  const gone = new Promise((res) => r.once('exit', res));
  r.kill('SIGKILL');
  await gone;
}

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('survivered'));
  redisPort = await freePort();
  await startRedis();
  const ports = await freePorts(ROLES);
  procs = ROLES.map((role) => {
    bases[role] = `http://127.0.0.1:${ports[role]}`;
    return startRole(env, role, {
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      SAGA_FAST_PATH: 'true',
      RELAY_GRACE_MS: '300',
      ...(role === 'api' ? { PORT: String(ports[role]) } : { METRICS_PORT: String(ports[role]) }),
    });
  });
  drainedRelay = startRole(env, 'relay', { REDIS_URL: `redis://127.0.0.1:${redisPort}` });
  api = agentApi(bases.api!, await createApiToken(env.db, { tenantId: 'acme', role: 'agent' }));
  for (const role of ROLES) await waitForReadyz(bases[role]!, 200, 60_000);
  await waitFor('second relay started', () =>
    drainedRelay.output().includes('relay started') ? true : undefined,
  );
}, 120_000);
afterAll(async () => {
  await killAll([...procs, drainedRelay]);
  await stopRedis();
  await env?.close();
});

describe('Redis stopped under running roles', () => {
  it('answers 202 INTENDED within waitMs plus the bound, and completes once Redis is back', async () => {
    await api.createRun('run-redis');
    const before = await api.call('run-redis', {
      tool: 'create_note',
      args: { orderId: 'r-0', text: 'before' },
      stepIdx: 0,
      waitMs: 10_000,
    });
    expect(before.body.status).toBe('CONFIRMED');

    await stopRedis();
    for (const role of ROLES) await waitForReadyz(bases[role]!, 503);

    const waitMs = 1_000;
    const during = await api.call('run-redis', {
      tool: 'create_note',
      args: { orderId: 'r-1', text: 'while Redis is down' },
      stepIdx: 1,
      waitMs,
    });
    expect(during.status).toBe(202);
    expect(during.body.status).toBe(StepStatus.INTENDED);
    expect(during.elapsedMs).toBeLessThan(waitMs + CALL_BOUND_MS);
    for (const role of ROLES) {
      const r = await readyz(bases[role]!);
      expect(r.status, role).toBe(503);
      expect(r.elapsedMs, role).toBeLessThan(3_000);
    }
    const key = String(during.body.idempotencyKey);

    const t0 = Date.now();
    const drained = await drainedRelay.stop('SIGTERM');
    expect(drained.code, drainedRelay.output().slice(-3_000)).toBe(0);
    // Why 10 s: its publish bound (2 × REDIS_COMMAND_TIMEOUT_MS = 4 s) and the close of its connections.
    expect(Date.now() - t0).toBeLessThan(10_000);
    // A little later the step is still waiting, unpublished: nothing reached an executor.
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await readStep(env.db, key))?.status).toBe(StepStatus.INTENDED);
    expect(await effectsFor(fx, key)).toHaveLength(0);

    await startRedis(); // empty: whatever the fast path might have added is gone anyway
    const settled = await waitForStatus(env.db, key, [StepStatus.CONFIRMED, StepStatus.UNKNOWN], 40_000);
    expect(settled.status).toBe(StepStatus.CONFIRMED);
    expect(await effectsFor(fx, key)).toHaveLength(1);
    const outbox = await env.db
      .selectFrom('outbox')
      .select('published_at')
      .where('idempotency_key', '=', key)
      .execute();
    expect(outbox.map((o) => o.published_at !== null)).toEqual([true]);
    for (const role of ROLES) await waitForReadyz(bases[role]!, 200);

    // A call after the restart takes the fast path again.
    const after = await api.call('run-redis', {
      tool: 'create_note',
      args: { orderId: 'r-2', text: 'after' },
      stepIdx: 2,
      waitMs: 10_000,
    });
    expect(after.body.status).toBe('CONFIRMED');
    expect(await effectsFor(fx, String(after.body.idempotencyKey))).toHaveLength(1);
    expect(exitedRoles(procs)).toEqual([]);
  }, 150_000);
});
