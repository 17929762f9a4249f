/**
 * An executor proves it is alive by holding a Postgres session lock (`holdWorkerLiveness`), so the leases
 * of one that was SIGKILLed lapse when its session ends, not when their time runs out. The tool's timeout
 * here is 60 s, so each lease would last 60.5 s: every step below is settled well inside that, by the
 * reconciler's lookup by key (it found the effect the dead executor made), or by the executor that takes
 * the redelivered job (moved to UNKNOWN, never executed again). A plain lease owner (the same row under
 * an id that proves nothing) is left alone until its time ends:
 * `services/reconciler/test/lease-holder-gone.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { CrashPoint, LEASE_EXPIRED_CAUSE, StepStatus } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { closeFixtureTestEnv, createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { effectsFor } from './fixtures/effect-tools.js';
import {
  createIntent,
  eventsOf,
  readStep,
  startRole,
  waitForStatus,
  type RoleProcess,
} from './fixtures/dispatcher-processes.js';

let env: TestEnv;
let fx: Kysely<unknown>;
const procs: RoleProcess[] = [];
/** Tool timeout 60 s (+ LEASE_MARGIN_MS 500 ms): a claimed step's lease outlives every wait below. */
const ROLE_ENV = { FIXTURE_TOOL_TIMEOUT_MS: '60000', RECONCILER_SWEEP_MS: '500' };
/** Why 20 s: a sweep, a lookup and two role starts on a busy machine; a third of the lease. */
const SETTLE_WITHIN_MS = 20_000;

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('liveness'));
  procs.push(startRole(env, 'relay', ROLE_ENV));
});
afterAll(() => closeFixtureTestEnv(env, procs));

/** An executor that dies after the tool's effect, before recording it; the step as it left it. */
async function killedAfterEffect(runId: string) {
  const crashing = startRole(env, 'executor', {
    ...ROLE_ENV,
    SAGA_CRASH_POINTS: CrashPoint.AFTER_TOOL_BEFORE_RECORD,
  });
  procs.push(crashing);
  const row = await createIntent(env, {
    runId,
    stepIdx: 0,
    tool: 'create_note',
    args: { orderId: runId, text: 'kill me' },
  });
  expect((await crashing.exited).signal).toBe('SIGKILL');
  const crashed = (await readStep(env.db, row.idempotency_key))!;
  expect(crashed.status).toBe(StepStatus.INTENDED);
  expect(crashed.lease_owner).toMatch(/\+live$/);
  expect(await effectsFor(fx, row.idempotency_key)).toHaveLength(1);
  return { key: row.idempotency_key, leaseUntil: crashed.lease_until! };
}

describe("a killed executor's lease lapses with its session", () => {
  it('the reconciler finds the effect by key and confirms the step, long before the lease would end', async () => {
    const { key, leaseUntil } = await killedAfterEffect('run-liveness-reconcile');
    const reconciler = startRole(env, 'reconciler', ROLE_ENV);
    procs.push(reconciler);

    const settled = await waitForStatus(env.db, key, [StepStatus.CONFIRMED], SETTLE_WITHIN_MS);
    expect(Date.now()).toBeLessThan(leaseUntil.getTime() - 30_000);
    expect(settled.attempts).toBe(1);
    expect(await effectsFor(fx, key)).toHaveLength(1);
    const events = await eventsOf(env.db, 'run-liveness-reconcile', 0);
    expect(events.at(-1)).toMatchObject({ from_status: 'INTENDED', to_status: 'CONFIRMED' });
    await reconciler.stop();
  });

  it('an executor given the redelivered job moves the step to UNKNOWN at once, without running it', async () => {
    const { key, leaseUntil } = await killedAfterEffect('run-liveness-redelivered');
    const healthy = startRole(env, 'executor', ROLE_ENV);
    procs.push(healthy);

    const unknown = await waitForStatus(
      env.db,
      key,
      [StepStatus.UNKNOWN, StepStatus.CONFIRMED],
      SETTLE_WITHIN_MS,
    );
    expect(Date.now()).toBeLessThan(leaseUntil.getTime() - 30_000);
    expect(unknown.status).toBe(StepStatus.UNKNOWN);
    expect(unknown.error).toMatchObject({ code: 'LEASE_EXPIRED' });
    expect(unknown.attempts).toBe(1);
    expect(await effectsFor(fx, key)).toHaveLength(1);
    const last = (await eventsOf(env.db, 'run-liveness-redelivered', 0)).at(-1);
    expect(last).toMatchObject({ from_status: 'INTENDED', to_status: 'UNKNOWN', cause: LEASE_EXPIRED_CAUSE });
    await healthy.stop();
  });
});
