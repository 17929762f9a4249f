/**
 * SAGA_EXECUTE_INLINE: the API runs a call's first attempt itself. As real processes: an api with inline
 * execution and a relay, and no executor at first, so a call that settles proves the API ran it; then the
 * API SIGKILLed after the tool's effect and before recording (the executor's crash point, reached in the API
 * process), and a new API whose retry finds the effect by key; then more calls at once than the API runs
 * inline, so the rest must reach the executor pool through BullMQ.
 */
import type { Kysely } from 'kysely';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSagaClient, type SagaClient } from '@agent-saga/client';
import {
  bullmqConnection,
  createApiToken,
  CrashPoint,
  freePort,
  readRunCursor,
  stepKey,
} from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { closeFixtureTestEnv, createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { effectsFor } from './fixtures/effect-tools.js';
import {
  eventsOf,
  readStep,
  startRole,
  waitFor,
  type RoleProcess,
  waitForReady,
} from './fixtures/dispatcher-processes.js';

let env: TestEnv;
let fx: Kysely<unknown>;
let token: string;
let queue: Queue;
const procs: RoleProcess[] = [];
/** The fast path on (inline execution needs it); tools time out after 1 s, leases last 1.5 s. */
const ROLE_ENV = {
  SAGA_FAST_PATH: 'true',
  SAGA_EXECUTE_INLINE: 'true',
  RELAY_GRACE_MS: '500',
  FIXTURE_TOOL_TIMEOUT_MS: '1000',
  LOOKUP_RECHECK_MS: '100',
};

async function startApi(
  extra: Record<string, string> = {},
): Promise<{ saga: SagaClient; api: RoleProcess; metricsUrl: string }> {
  const [port, metricsPort] = await Promise.all([freePort(), freePort()]);
  const baseUrl = `http://127.0.0.1:${port}`;
  const api = startRole(env, 'api', {
    ...ROLE_ENV,
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    ...extra,
  });
  procs.push(api);
  await waitForReady(baseUrl, 55_000);
  return {
    // No repeats of a call that got no answer: the crash tests look at what the first send did.
    saga: createSagaClient({ baseUrl, token, unavailableRetryMs: 0 }),
    api,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
  };
}

/** Jobs in the execute queue now, by state (the queue's name as the dispatcher's). */
async function jobCounts(): Promise<Record<string, number>> {
  return queue.getJobCounts('wait', 'active', 'failed', 'delayed');
}

/** The process that claimed step 0 of `runId`: the pid in its attempt event's lease owner (`host:pid:…`). */
async function claimedByPid(runId: string): Promise<number> {
  const attempt = (await eventsOf(env.db, runId, 0)).find((e) => e.kind === 'attempt');
  const worker = (attempt?.detail as { worker?: string } | null)?.worker ?? '';
  return Number(worker.split(':')[1]);
}

async function runCursor(runId: string): Promise<number | undefined> {
  return readRunCursor(env.db, runId);
}

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('inline'));
  token = await createApiToken(env.db, { tenantId: 'acme', role: 'agent' });
  queue = new Queue('saga-execute', { connection: bullmqConnection(env.redisUrl), prefix: env.queuePrefix });
  procs.push(startRole(env, 'relay', ROLE_ENV));
});
afterAll(async () => {
  await queue.close();
  await closeFixtureTestEnv(env, procs);
});

describe('inline execution', () => {
  it('settles a call with no executor running and adds no BullMQ job: the API ran the tool', async () => {
    const { saga, api, metricsUrl } = await startApi();
    const { runId } = await saga.createRun({ runId: 'inline-happy' });
    const outcome = await saga.call(runId, 'create_note', { orderId: 'i1', text: 'inline' }, { stepIdx: 0 });
    expect(outcome).toMatchObject({ status: 'CONFIRMED', stepIdx: 0, replayed: false });
    const key = stepKey(runId, 0, 'create_note');
    expect(await effectsFor(fx, key)).toHaveLength(1);
    expect(await readStep(env.db, key)).toMatchObject({
      status: 'CONFIRMED',
      attempts: 1,
      lease_owner: null,
    });
    // Written claimed, with no outbox message: the relay has nothing to hand to an executor.
    const outbox = await env.db.selectFrom('outbox').selectAll().where('run_id', '=', runId).execute();
    expect(outbox).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 1_500)); // past RELAY_GRACE_MS and a relay poll
    expect(Object.values(await jobCounts()).reduce((a, b) => a + b, 0)).toBe(0);
    expect(await claimedByPid(runId)).toBe(api.child.pid);
    // Claimed in the intake's own statement (no claim statement): the attempt event says so.
    const attempt = (await eventsOf(env.db, runId, 0)).find((e) => e.kind === 'attempt');
    expect(attempt?.cause).toBe('api: claimed at intake');
    // The answer carried the outcome, so it is delivered and the cursor is past it (the outcome's statement
    // did both): a call without stepIdx now goes to step 1.
    expect(await readStep(env.db, key)).toMatchObject({ outcome_delivered: true });
    expect(await runCursor(runId)).toBe(1);
    // Counted as an executor counts its executions, on the API's metrics listener.
    const scraped = await (await fetch(metricsUrl)).text();
    expect(scraped).toMatch(/^saga_executions_total\{[^}]*tool="create_note"[^}]*\} 1$/m);
    expect(scraped).toMatch(/^saga_calls_total\{/m);
    const transitions = (await eventsOf(env.db, runId, 0)).filter((e) => e.kind === 'transition');
    expect(transitions.map((e) => `${e.from_status ?? ''}→${e.to_status}`)).toEqual([
      '→INTENDED',
      'INTENDED→CONFIRMED',
    ]);
  });

  it('a call that stops waiting before the outcome: answered pending, the outcome recorded undelivered', async () => {
    const { saga } = await startApi();
    const { runId } = await saga.createRun({ runId: 'inline-gone' });
    // waitMs 0: the request gives the outcome up before the tool can have answered (it writes to Postgres).
    const first = await saga.call(
      runId,
      'create_note',
      { orderId: 'i4', text: 'late' },
      { stepIdx: 0, waitMs: 0 },
    );
    expect(first).toMatchObject({ status: 'INTENDED', stepIdx: 0 });
    const key = stepKey(runId, 0, 'create_note');
    await waitFor('the inline attempt to record', async () =>
      (await readStep(env.db, key))?.status === 'CONFIRMED' ? true : undefined,
    );
    // Nobody received it: not delivered, and the cursor stays on the step.
    expect(await readStep(env.db, key)).toMatchObject({ outcome_delivered: false, attempts: 1 });
    expect(await runCursor(runId)).toBe(0);
    // The retry receives it (replayed), which delivers it.
    const again = await saga.call(runId, 'create_note', { orderId: 'i4', text: 'late' }, { stepIdx: 0 });
    expect(again).toMatchObject({ status: 'CONFIRMED', replayed: true });
    expect(await runCursor(runId)).toBe(1);
    expect(await effectsFor(fx, key)).toHaveLength(1);
  });

  it('the API killed after the effect, before recording: one effect, and a new API finds it by key', async () => {
    for (const p of procs.filter((p) => p.role === 'api')) await p.stop('SIGTERM');
    const { saga, api } = await startApi({ SAGA_CRASH_POINTS: CrashPoint.AFTER_TOOL_BEFORE_RECORD });
    const { runId } = await saga.createRun({ runId: 'inline-crash' });
    const first = await saga
      .call(runId, 'create_note', { orderId: 'i2', text: 'crash me' }, { stepIdx: 0, waitMs: 5_000 })
      .catch((e: unknown) => e);
    // The API died holding the request: the caller sees the connection fail, not an outcome.
    expect(first).toBeInstanceOf(Error);
    expect((await api.exited).signal).toBe('SIGKILL');
    expect(api.output()).toContain(`crash point reached: ${CrashPoint.AFTER_TOOL_BEFORE_RECORD}`);
    const key = stepKey(runId, 0, 'create_note');
    expect(await effectsFor(fx, key)).toHaveLength(1);
    const row = await readStep(env.db, key);
    expect(row).toMatchObject({ status: 'INTENDED', attempts: 1 });
    expect(row?.lease_owner).not.toBeNull();

    // After the lease the model retries through a new API; the harness looks the effect up by key.
    const { saga: again } = await startApi();
    await waitFor('lease expiry', () => ((row!.lease_until?.getTime() ?? 0) < Date.now() ? true : undefined));
    const retry = await again.call(
      runId,
      'create_note',
      { orderId: 'i2', text: 'crash me, again' },
      { stepIdx: 0 },
    );
    expect(retry).toMatchObject({ status: 'CONFIRMED', replayed: true, idempotencyKey: key });
    expect(await effectsFor(fx, key)).toHaveLength(1);
    expect((await eventsOf(env.db, runId, 0)).map((e) => e.kind)).toEqual(
      expect.arrayContaining(['retry_call', 'lookup']),
    );
  });

  it('the API killed after the intake claimed the step, before the call: nothing sent, a new API sends it once', async () => {
    for (const p of procs.filter((p) => p.role === 'api')) await p.stop('SIGTERM');
    const { saga, api } = await startApi({ SAGA_CRASH_POINTS: CrashPoint.AFTER_CLAIM_BEFORE_TOOL });
    const { runId } = await saga.createRun({ runId: 'inline-crash-before-call' });
    const first = await saga
      .call(runId, 'create_note', { orderId: 'i3', text: 'never sent' }, { stepIdx: 0, waitMs: 5_000 })
      .catch((e: unknown) => e);
    expect(first).toBeInstanceOf(Error);
    expect((await api.exited).signal).toBe('SIGKILL');
    const key = stepKey(runId, 0, 'create_note');
    expect(await effectsFor(fx, key)).toHaveLength(0);
    // The intake committed the row already claimed by the dead API: the relay must not hand it on.
    const row = await readStep(env.db, key);
    expect(row).toMatchObject({ status: 'INTENDED', attempts: 1 });
    expect(Number(row?.lease_owner?.split(':')[1])).toBe(api.child.pid);
    const outbox = await env.db.selectFrom('outbox').selectAll().where('run_id', '=', runId).execute();
    expect(outbox).toEqual([]);

    // After the lease, the retry through a new API looks the key up, finds nothing, and sends it: once.
    const { saga: again } = await startApi();
    await waitFor('lease expiry', () => ((row!.lease_until?.getTime() ?? 0) < Date.now() ? true : undefined));
    expect(await effectsFor(fx, key)).toHaveLength(0);
    const retry = await again.call(
      runId,
      'create_note',
      { orderId: 'i3', text: 'never sent' },
      { stepIdx: 0, waitMs: 15_000 },
    );
    expect(retry).toMatchObject({ status: 'CONFIRMED', idempotencyKey: key });
    expect(await effectsFor(fx, key)).toHaveLength(1);
    // Sent again as dispatch 2: the intake's (1) left no message but keeps its number.
    const resent = await env.db.selectFrom('outbox').select('job_id').where('run_id', '=', runId).execute();
    expect(resent.map((o) => o.job_id)).toEqual([`${key}-d2`]);
    expect((await eventsOf(env.db, runId, 0)).map((e) => e.kind)).toEqual(
      expect.arrayContaining(['retry_call', 'lookup']),
    );
  });

  it('past its concurrency, the API hands calls to the executor pool: every call settles, each effect once', async () => {
    for (const p of procs.filter((p) => p.role === 'api')) await p.stop('SIGTERM');
    const { saga, api } = await startApi({ EXECUTOR_CONCURRENCY: '1' });
    const executor = startRole(env, 'executor', ROLE_ENV);
    procs.push(executor);
    const runs = Array.from({ length: 8 }, (_, i) => `inline-full-${i}`);
    await Promise.all(runs.map((runId) => saga.createRun({ runId })));
    const outcomes = await Promise.all(
      runs.map((runId) =>
        saga.call(runId, 'create_note', { orderId: runId, text: 'x' }, { stepIdx: 0, waitMs: 30_000 }),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(runs.map(() => 'CONFIRMED'));
    for (const runId of runs) expect(await effectsFor(fx, stepKey(runId, 0, 'create_note'))).toHaveLength(1);
    // With one inline slot and eight calls at once, some ran in the API and the rest in the executor.
    const pids = await Promise.all(runs.map(claimedByPid));
    expect(pids).toContain(api.child.pid);
    expect(pids).toContain(executor.child.pid);
    expect(pids.every((p) => p === api.child.pid || p === executor.child.pid)).toBe(true);
  });
});
