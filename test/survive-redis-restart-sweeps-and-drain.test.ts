/**
 * Two bounds that must hold while Redis loses everything (a private `redis-server` of this file, never the
 * shared one, killed and started again empty):
 * - the reconciler's periodic work comes back by itself: its BullMQ job schedulers lived in the Redis that
 *   was lost, and without restarting the reconciler an UNKNOWN step written after the restart is still
 *   swept and settled within a few sweep intervals; the reconciler never exits;
 * - an executor sent SIGTERM while Redis is down, with a tool call running, exits 0 within its drain time
 *   plus a bound: the call gets its drain time, is aborted and records UNKNOWN, and BullMQ's bookkeeping in
 *   the unreachable Redis does not hold the exit; the reconciler's and the compensator's drains end too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { StepStatus } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { unknownStep } from '../services/reconciler/test/reconciler-harness.js';
import { effectsFor, FaultKind, injectFault } from './fixtures/effect-tools.js';
import {
  createIntent,
  killAll,
  readStep,
  startRole,
  waitFor,
  waitForStatus,
  type RoleProcess,
} from './fixtures/dispatcher-processes.js';
import { privateRedis, type PrivateRedis } from './fixtures/private-redis.js';

let env: TestEnv;
let fx: Kysely<unknown>;
let redis: PrivateRedis;
const procs: RoleProcess[] = [];

/** Why 300 ms: several sweeps a second, so "a few sweep intervals" stays short in the test. */
const SWEEP_MS = 300;
/** Why 1 s: the executor's drain time in the test: a running call is aborted after it. */
const DRAIN_MS = 1_000;

function start(
  role: 'reconciler' | 'compensator' | 'relay' | 'executor',
  extra: Record<string, string> = {},
): RoleProcess {
  const p = startRole(env, role, { REDIS_URL: redis.url, ...extra });
  procs.push(p);
  return p;
}

/** Why 45 s: a role boots in 2–5 s here, but past 20 s when the machine's load average reaches 20. */
const START_TIMEOUT_MS = 45_000;

async function started(p: RoleProcess, msg: string): Promise<void> {
  await waitFor(
    `${p.role} started`,
    () => {
      if (p.child.exitCode !== null) throw new Error(`${p.role} exited:\n${p.output()}`);
      return p.output().includes(`"msg":"${msg}"`) ? true : undefined;
    },
    START_TIMEOUT_MS,
  );
}

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('redissweepdrain'));
  redis = await privateRedis();
  await redis.start();
}, 60_000);
afterAll(async () => {
  await killAll(procs);
  await redis?.kill();
  await env?.close();
});

describe('Redis restarted empty under a running reconciler', () => {
  it('sweeps again within a few sweep intervals, without a restart of the reconciler', async () => {
    const reconciler = start('reconciler', {
      RECONCILER_SWEEP_MS: String(SWEEP_MS),
      RECONCILER_SCAN_MS: '1000',
      LOOKUP_RECHECK_MS: '300',
      RECONCILER_BACKOFF_BASE_MS: '300',
      RECONCILER_LEASE_MARGIN_MS: '1000',
      FIXTURE_TOOL_TIMEOUT_MS: '1000',
    });
    await started(reconciler, 'reconciler started');

    // Before: the sweep settles an UNKNOWN step whose call reached the system (found by lookup).
    const before = await unknownStep(env, 'run-sweep-before', { effects: 1 });
    expect((await waitForStatus(env.db, before.key, [StepStatus.CONFIRMED], 15_000)).status).toBe(
      StepStatus.CONFIRMED,
    );

    await redis.kill();
    await new Promise((r) => setTimeout(r, 1_000));
    await redis.start(); // empty: the job schedulers and their next jobs are gone

    // An UNKNOWN step left after the restart: only a sweep can settle it (nobody asks for it by key).
    const after = await unknownStep(env, 'run-sweep-after', { effects: 1 });
    const t0 = Date.now();
    const settled = await waitForStatus(env.db, after.key, [StepStatus.CONFIRMED], 30_000);
    expect(settled.status).toBe(StepStatus.CONFIRMED);
    // Why 15 s: the worker's reconnect (BullMQ's backoff: about 1 s after a short outage), the schedulers
    // re-created at the next keeper tick (one sweep interval), then one sweep and its lookup; generous on a
    // loaded machine, far below "until someone restarts the reconciler".
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(await effectsFor(fx, after.key)).toHaveLength(1);
    expect(reconciler.child.exitCode, reconciler.output().slice(-3_000)).toBeNull();
    expect(reconciler.child.signalCode).toBeNull();
    expect(reconciler.output()).toContain('reconcile schedulers were missing from Redis');
  }, 90_000);
});

describe('the reconciler and the compensator drained while Redis is down', () => {
  it('exit 0 within a bound', async () => {
    await redis.start();
    const reconciler = start('reconciler', { RECONCILER_SWEEP_MS: String(SWEEP_MS) });
    const compensator = start('compensator', { COMPENSATOR_DRAIN_MS: String(DRAIN_MS) });
    await started(reconciler, 'reconciler started');
    await started(compensator, 'compensator started');
    await redis.kill();
    const t0 = Date.now();
    const [r, c] = await Promise.all([reconciler.stop('SIGTERM'), compensator.stop('SIGTERM')]);
    expect(r.code, reconciler.output().slice(-3_000)).toBe(0);
    expect(c.code, compensator.output().slice(-3_000)).toBe(0);
    // Why 15 s: the worker's close bound (CLOSE_TIMEOUT_MS, 5 s) and the queue's (5 s more), with slack.
    expect(Date.now() - t0).toBeLessThan(15_000);
  }, 60_000);
});

describe('an executor drained while Redis is down', () => {
  it('exits 0 within its drain time plus a bound, the running call aborted and recorded UNKNOWN', async () => {
    await redis.start();
    const roleEnv = {
      // The call hangs until the drain aborts it, long before its own timeout.
      FIXTURE_TOOL_TIMEOUT_MS: '30000',
      EXECUTOR_DRAIN_MS: String(DRAIN_MS),
    };
    start('relay', roleEnv);
    const executor = start('executor', roleEnv);
    await started(executor, 'executor started');
    await injectFault(fx, 'create_note', FaultKind.TIMEOUT);
    const row = await createIntent(env, {
      runId: 'run-drain',
      stepIdx: 0,
      tool: 'create_note',
      args: { orderId: 'run-drain', text: 'hangs until the drain aborts it' },
    });
    const key = row.idempotency_key;
    await waitFor('the call running', async () => {
      const r = await readStep(env.db, key);
      return r?.status === StepStatus.INTENDED && r.lease_owner !== null ? true : undefined;
    });

    await redis.kill();
    const t0 = Date.now();
    const exit = await executor.stop('SIGTERM');
    const elapsed = Date.now() - t0;
    expect(exit.code, executor.output().slice(-3_000)).toBe(0);
    // Why 10 s: the drain time (1 s), then the bounded wait for BullMQ's bookkeeping (CLOSE_TIMEOUT_MS,
    // 5 s), with slack for a loaded machine.
    expect(elapsed).toBeGreaterThanOrEqual(DRAIN_MS);
    expect(elapsed).toBeLessThan(10_000);
    const recorded = await readStep(env.db, key);
    expect(recorded?.status).toBe(StepStatus.UNKNOWN);
    expect(recorded?.lease_owner).toBeNull();
    expect(await effectsFor(fx, key)).toHaveLength(0);
  }, 90_000);
});
