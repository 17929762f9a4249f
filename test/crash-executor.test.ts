/**
 * The executor SIGKILLed at its two crash points. After the tool's effect and before recording: the
 * effect exists once, the row stays INTENDED under a lease that then expires, and the executor that gets
 * the redelivered job (BullMQ's stalled check) moves the step to UNKNOWN instead of executing it again.
 * After the claim and before the tool: the same recovery (the harness cannot know nothing was sent).
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
  waitFor,
  waitForStatus,
  type RoleProcess,
} from './fixtures/dispatcher-processes.js';

let env: TestEnv;
let fx: Kysely<unknown>;
const procs: RoleProcess[] = [];
let healthy: RoleProcess | undefined;
/** Tool timeout 1 s + LEASE_MARGIN_MS 500 ms: the lease of a claimed step lasts 1.5 s. */
const ROLE_ENV = { FIXTURE_TOOL_TIMEOUT_MS: '1000' };

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('crashexec'));
  procs.push(startRole(env, 'relay', ROLE_ENV));
});
afterAll(() => closeFixtureTestEnv(env, procs));

async function crashAt(point: CrashPoint, runId: string) {
  const crashing = startRole(env, 'executor', { ...ROLE_ENV, SAGA_CRASH_POINTS: point });
  procs.push(crashing);
  const row = await createIntent(env, {
    runId,
    stepIdx: 0,
    tool: 'create_note',
    args: { orderId: runId, text: 'crash me' },
  });
  const exit = await crashing.exited;
  expect(exit.signal).toBe('SIGKILL');
  expect(crashing.output()).toContain(`crash point reached: ${point}`);
  return row.idempotency_key;
}

describe('executor crash', () => {
  it('after the effect, before recording: one effect, INTENDED until the lease expires, then UNKNOWN', async () => {
    const key = await crashAt(CrashPoint.AFTER_TOOL_BEFORE_RECORD, 'run-after-tool');
    expect(await effectsFor(fx, key)).toHaveLength(1);
    const crashed = await readStep(env.db, key);
    expect(crashed?.status).toBe('INTENDED');
    expect(crashed?.lease_owner).not.toBeNull();
    expect(crashed?.attempts).toBe(1);

    // The lease runs out with nobody recording; the row is still INTENDED.
    await waitFor('lease expiry', () =>
      (crashed!.lease_until?.getTime() ?? 0) < Date.now() ? true : undefined,
    );
    expect((await readStep(env.db, key))?.status).toBe('INTENDED');

    // A second executor gets the redelivered job and moves the step to UNKNOWN instead of executing it.
    healthy = startRole(env, 'executor', ROLE_ENV);
    procs.push(healthy);
    const unknown = await waitForStatus(env.db, key, [StepStatus.UNKNOWN, StepStatus.CONFIRMED], 30_000);
    expect(unknown.status).toBe('UNKNOWN');
    expect(unknown.error).toMatchObject({ code: 'LEASE_EXPIRED' });
    expect(unknown.attempts).toBe(1);
    expect(unknown.lease_owner).toBeNull();
    expect(await effectsFor(fx, key)).toHaveLength(1);
    const last = (await eventsOf(env.db, 'run-after-tool', 0)).at(-1);
    expect(last).toMatchObject({ from_status: 'INTENDED', to_status: 'UNKNOWN', cause: LEASE_EXPIRED_CAUSE });
  });

  it('after the claim, before the tool: no effect, and the step still goes to UNKNOWN, not executed', async () => {
    // Only the crashing executor may take this job: drain the healthy one first (SIGTERM exits 0).
    expect((await healthy?.stop())?.code).toBe(0);
    const key = await crashAt(CrashPoint.AFTER_CLAIM_BEFORE_TOOL, 'run-after-claim');
    expect(await effectsFor(fx, key)).toHaveLength(0);
    expect((await readStep(env.db, key))?.status).toBe('INTENDED');
    procs.push(startRole(env, 'executor', ROLE_ENV));
    const unknown = await waitForStatus(env.db, key, [StepStatus.UNKNOWN, StepStatus.CONFIRMED], 30_000);
    expect(unknown.status).toBe('UNKNOWN');
    expect(await effectsFor(fx, key)).toHaveLength(0);
  });
});
