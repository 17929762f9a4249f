/**
 * The whole dispatcher as an agent backend meets it: api, relay and executors as real processes, the typed
 * client over HTTP, the fixture tools counting real effects. Covers the happy path, the outcomes a caller
 * may see, the executor killed after the effect and before recording (the agent's retry finds the effect
 * by key), resume from the log with no transcript, and a load of concurrent calls with reworded retries.
 */
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSagaClient, ConflictError, ToolOutcomeUnknown, type SagaClient } from '@agent-saga/client';
import { createApiToken, CrashPoint, stepKey } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { closeFixtureTestEnv, createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { effectsFor, FaultKind, injectFault } from './fixtures/effect-tools.js';
import {
  eventsOf,
  readStep,
  startRole,
  waitFor,
  type RoleProcess,
  waitForReady,
} from './fixtures/dispatcher-processes.js';
import { freePort } from '@agent-saga/core';

let env: TestEnv;
let fx: Kysely<unknown>;
let saga: SagaClient;
let baseUrl: string;
const procs: RoleProcess[] = [];
/** The fast path on, as in production; tools time out after 1 s so UNKNOWN comes quickly. */
const ROLE_ENV = {
  SAGA_FAST_PATH: 'true',
  RELAY_GRACE_MS: '500',
  FIXTURE_TOOL_TIMEOUT_MS: '1000',
  LOOKUP_RECHECK_MS: '100',
};

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('e2e'));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  procs.push(startRole(env, 'api', { ...ROLE_ENV, PORT: String(port) }));
  procs.push(startRole(env, 'relay', ROLE_ENV));
  procs.push(startRole(env, 'executor', ROLE_ENV));
  const token = await createApiToken(env.db, { tenantId: 'acme', role: 'agent' });
  saga = createSagaClient({ baseUrl, token });
  await waitForReady(baseUrl, 55_000);
});
afterAll(() => closeFixtureTestEnv(env, procs));

describe('one call end to end', () => {
  it('goes intent row → outbox → BullMQ → tool → CONFIRMED, and the log holds the row, its events and the result', async () => {
    const { runId } = await saga.createRun({ runId: 'e2e-happy' });
    const outcome = await saga.call(
      runId,
      'create_note',
      { orderId: '1182', text: 'Refund order 1182' },
      { stepIdx: 0 },
    );
    expect(outcome).toMatchObject({ status: 'CONFIRMED', stepIdx: 0, replayed: false });
    const key = stepKey(runId, 0, 'create_note');
    expect(outcome.status === 'CONFIRMED' && outcome.idempotencyKey).toBe(key);
    const effects = await effectsFor(fx, key);
    expect(effects).toHaveLength(1);
    expect(outcome.status === 'CONFIRMED' && outcome.externalRef).toBe(`FX-${effects[0]!.id}`);

    const run = await saga.getRun(runId);
    expect(run.steps).toHaveLength(1);
    expect(run.steps[0]).toMatchObject({
      status: 'CONFIRMED',
      tool: 'create_note',
      attempts: 1,
      idempotencyKey: key,
    });
    expect(run.steps[0]!.compensation).toMatchObject({ tool: 'delete_note', args: { note: { $ref: key } } });
    const transitions = (await eventsOf(env.db, runId, 0)).filter((e) => e.kind === 'transition');
    expect(transitions.map((e) => `${e.from_status ?? ''}→${e.to_status}`)).toEqual([
      '→INTENDED',
      'INTENDED→CONFIRMED',
    ]);
    const outbox = await env.db.selectFrom('outbox').selectAll().where('run_id', '=', runId).execute();
    expect(outbox).toHaveLength(1);
    expect(outbox[0]!.published_at).not.toBeNull();
  });

  it('answers a tool timeout and a 5xx after the effect with UNKNOWN, never FAILED, and a rejection with FAILED', async () => {
    for (const [runId, fault] of [
      ['e2e-timeout', FaultKind.TIMEOUT],
      ['e2e-504', FaultKind.ERROR_AFTER],
    ] as const) {
      await saga.createRun({ runId });
      await injectFault(fx, 'create_note', fault);
      const err = await saga
        .call(runId, 'create_note', { orderId: runId, text: 't' }, { stepIdx: 0 })
        .catch((e: unknown) => e);
      expect(err, fault).toBeInstanceOf(ToolOutcomeUnknown);
      expect((err as ToolOutcomeUnknown).message).toMatch(/do not call this tool again with new arguments/i);
      expect((await readStep(env.db, stepKey(runId, 0, 'create_note')))?.status).toBe('UNKNOWN');
    }
    // The 504 came after the effect: it exists, once; the timeout made none.
    expect(await effectsFor(fx, stepKey('e2e-504', 0, 'create_note'))).toHaveLength(1);
    expect(await effectsFor(fx, stepKey('e2e-timeout', 0, 'create_note'))).toHaveLength(0);

    await saga.createRun({ runId: 'e2e-reject' });
    await injectFault(fx, 'create_note', FaultKind.REJECT);
    const rejected = await saga.call(
      'e2e-reject',
      'create_note',
      { orderId: 'b', text: 't' },
      { stepIdx: 0 },
    );
    expect(rejected).toMatchObject({ status: 'FAILED', stepIdx: 0 });
    expect(await effectsFor(fx, stepKey('e2e-reject', 0, 'create_note'))).toHaveLength(0);
  });
});

describe('the executor killed after the effect, before recording', () => {
  it('leaves one effect; the agent retries the step with reworded arguments and gets it, found by key', async () => {
    // Stop the healthy executor so the crashing one takes the job.
    const healthy = procs.find((p) => p.role === 'executor')!;
    await healthy.stop('SIGTERM');
    const crashing = startRole(env, 'executor', {
      ...ROLE_ENV,
      SAGA_CRASH_POINTS: CrashPoint.AFTER_TOOL_BEFORE_RECORD,
    });
    procs.push(crashing);

    const { runId } = await saga.createRun({ runId: 'e2e-crash' });
    const first = await saga.call(
      runId,
      'create_note',
      { orderId: '1182', text: 'Refund for order #1182' },
      { stepIdx: 0, waitMs: 3_000 },
    );
    // The executor died before recording: the caller is told the step is still in flight.
    expect(first.status).toBe('INTENDED');
    expect((await crashing.exited).signal).toBe('SIGKILL');
    const key = stepKey(runId, 0, 'create_note');
    expect(await effectsFor(fx, key)).toHaveLength(1);
    const row = await readStep(env.db, key);
    expect(row).toMatchObject({ status: 'INTENDED', attempts: 1 });

    // After the lease (1 s timeout + 0.5 s margin) the model retries, reworded; the harness looks the effect up.
    await waitFor('lease expiry', () => ((row!.lease_until?.getTime() ?? 0) < Date.now() ? true : undefined));
    const retry = await saga.call(
      runId,
      'create_note',
      { orderId: '1182', text: 'Order #1182 refund' },
      { stepIdx: 0 },
    );
    expect(retry).toMatchObject({ status: 'CONFIRMED', replayed: true, idempotencyKey: key });
    expect(await effectsFor(fx, key)).toHaveLength(1);
    const events = await eventsOf(env.db, runId, 0);
    expect(events.map((e) => e.kind)).toEqual(expect.arrayContaining(['retry_call', 'lookup']));
    expect(events.find((e) => e.kind === 'retry_call')?.detail).toMatchObject({
      args: { text: 'Order #1182 refund' },
    });

    procs.push(startRole(env, 'executor', ROLE_ENV));
  });
});

describe('resume from the log', () => {
  it('a fresh agent with no transcript continues at the next step and never repeats a confirmed one', async () => {
    const { runId } = await saga.createRun({ runId: 'e2e-resume' });
    const before = saga.run(runId);
    // The executor restarted by the crash test may still be starting on a loaded machine: wait long enough.
    const wait = { waitMs: 30_000 };
    await before.call('create_note', { orderId: 'r1', text: 'one' }, wait);
    await before.call('echo', { text: 'pure calls take no step' });
    await before.call('create_note', { orderId: 'r2', text: 'two' }, wait);

    // A new process: nothing but the run id.
    const resumed = saga.run(runId);
    await resumed.sync();
    expect(resumed.nextStepIdx).toBe(2);
    const third = await resumed.call('create_note', { orderId: 'r3', text: 'three' }, wait);
    expect(third).toMatchObject({ status: 'CONFIRMED', stepIdx: 2 });
    // Replaying the transcript's first call at its index is a replay, not a second effect.
    const replay = await saga.call(runId, 'create_note', { orderId: 'r1', text: 'one' }, { stepIdx: 0 });
    expect(replay).toMatchObject({ status: 'CONFIRMED', replayed: true });
    for (const i of [0, 1, 2]) expect(await effectsFor(fx, stepKey(runId, i, 'create_note'))).toHaveLength(1);
    // Another tool at a used index is refused.
    await expect(
      saga.call(runId, 'send_notice', { to: 'a@b.co', text: 'x' }, { stepIdx: 1 }),
    ).rejects.toBeInstanceOf(ConflictError);
  });
});

describe('load', () => {
  it('300 concurrent calls over 20 runs, each sent twice with reworded text, two executors: every effect exactly once', async () => {
    procs.push(startRole(env, 'executor', ROLE_ENV));
    const runs = Array.from({ length: 20 }, (_, r) => `e2e-load-${r}`);
    await Promise.all(runs.map((runId) => saga.createRun({ runId })));
    const calls = runs.flatMap((runId) => Array.from({ length: 15 }, (_, stepIdx) => ({ runId, stepIdx })));
    // A call slower than the tool's timeout (1 s here) on a loaded machine is answered UNKNOWN, honestly; the
    // caller then repeats the same call at its step, as the answer tells it to, until the lookup settles it.
    const send = async (c: { runId: string; stepIdx: number }, wording: string) => {
      for (let tries = 1; ; tries++) {
        try {
          return await saga.call(
            c.runId,
            'create_note',
            { orderId: `${c.runId}/${c.stepIdx}`, text: wording },
            { stepIdx: c.stepIdx, waitMs: 30_000 },
          );
        } catch (err) {
          if (!(err instanceof ToolOutcomeUnknown) || tries >= 20) throw err;
        }
      }
    };
    const outcomes = await Promise.all(
      calls.flatMap((c) => [send(c, 'please refund'), send(c, 'refund, please')]),
    );
    expect(outcomes.every((o) => o.status === 'CONFIRMED')).toBe(true);
    const counts = await fx
      .selectFrom('fixture_effects' as never)
      .select(['key' as never])
      .where('key' as never, 'in', calls.map((c) => stepKey(c.runId, c.stepIdx, 'create_note')) as never)
      .execute();
    expect(counts).toHaveLength(300);
    expect(new Set(counts.map((r) => (r as { key: string }).key)).size).toBe(300);
  });
});
