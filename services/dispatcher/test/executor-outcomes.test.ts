/**
 * The executor as a real process behind a real relay: a call goes intent row → outbox → BullMQ → tool →
 * outcome, and each way a tool can end is recorded as what it means (only ClientError is FAILED).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { claimStep, runNotRunningCause, StepStatus } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { closeFixtureTestEnv, createFixtureTestEnv } from '../../../test/fixtures/fixture-test-env.js';
import { effectsFor, injectFault } from '../../../test/fixtures/effect-tools.js';
import {
  createIntent,
  eventsOf,
  readStep,
  startRole,
  waitForStatus,
  type RoleProcess,
} from '../../../test/fixtures/dispatcher-processes.js';
import { bullmqConnection } from '@agent-saga/core';
import { createExecuteQueue, publishExecute } from '../src/queue/execute-queue.js';

let env: TestEnv;
let fx: Kysely<unknown>;
const procs: RoleProcess[] = [];
/** Fixture tools time out after 1 s here; the lease is that plus LEASE_MARGIN_MS (500 ms). */
const TOOL_ENV = { FIXTURE_TOOL_TIMEOUT_MS: '1000' };

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('exec'));
  procs.push(startRole(env, 'relay', TOOL_ENV), startRole(env, 'executor', TOOL_ENV));
});
afterAll(() => closeFixtureTestEnv(env, procs));

const SETTLED = [StepStatus.CONFIRMED, StepStatus.FAILED, StepStatus.UNKNOWN];
let runSeq = 0;
async function call(tool = 'create_note', args: Record<string, unknown> = { orderId: 'o-1', text: 'hi' }) {
  const runId = `run-${++runSeq}`;
  const row = await createIntent(env, { runId, stepIdx: 0, tool, args });
  const settled = await waitForStatus(env.db, row.idempotency_key, SETTLED);
  return { runId, key: row.idempotency_key, row: settled };
}

describe('executor', () => {
  it('runs an intent to CONFIRMED with its events, result and one effect', async () => {
    const { runId, key, row } = await call();
    expect(row.status).toBe('CONFIRMED');
    expect(row.external_ref).toMatch(/^FX-\d+$/);
    expect(row.result).toEqual({ id: row.external_ref, tool: 'create_note', state: 'open' });
    expect(row.attempts).toBe(1);
    expect(row.lease_until).toBeNull();
    expect(row.lease_owner).toBeNull();
    expect(row.last_attempt_at).not.toBeNull();
    expect(await effectsFor(fx, key)).toHaveLength(1);
    const events = await eventsOf(env.db, runId, 0);
    expect(events.map((e) => [e.kind, e.from_status, e.to_status])).toEqual([
      ['transition', null, 'INTENDED'],
      ['attempt', null, null],
      ['transition', 'INTENDED', 'CONFIRMED'],
    ]);
    const outbox = await env.db.selectFrom('outbox').selectAll().where('run_id', '=', runId).execute();
    expect(outbox[0]?.published_at).not.toBeNull();
  });

  it('records a timeout as UNKNOWN, never FAILED', async () => {
    await injectFault(fx, 'create_note', 'timeout');
    const { key, row } = await call();
    expect(row.status).toBe('UNKNOWN');
    expect(row.error).toMatchObject({ code: 'TOOL_TIMEOUT' });
    expect(row.lease_until).toBeNull();
    expect(await effectsFor(fx, key)).toHaveLength(0);
  });

  it('records a 5xx before the effect as UNKNOWN', async () => {
    await injectFault(fx, 'create_note', 'error_before');
    const { row } = await call();
    expect(row.status).toBe('UNKNOWN');
    expect(row.error).toMatchObject({ code: 'OUTCOME_UNKNOWN', status: 503 });
  });

  it('records a 5xx after the effect (the 504 after commit) as UNKNOWN, the effect being real', async () => {
    await injectFault(fx, 'create_note', 'error_after');
    const { key, row } = await call();
    expect(row.status).toBe('UNKNOWN');
    expect(row.error).toMatchObject({ status: 504 });
    expect(await effectsFor(fx, key)).toHaveLength(1);
  });

  it('records a ClientError as FAILED', async () => {
    await injectFault(fx, 'create_note', 'reject');
    const { key, row } = await call();
    expect(row.status).toBe('FAILED');
    expect(row.error).toMatchObject({ code: 'CLIENT_ERROR', status: 422 });
    expect(await effectsFor(fx, key)).toHaveLength(0);
  });

  it('does nothing for a job delivered again after the step settled', async () => {
    const { key, row } = await call();
    expect(row.status).toBe('CONFIRMED');
    const queue = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
    try {
      // The first job was removed on completion, so this add is a real second delivery.
      await publishExecute(queue, key, { runId: row.run_id, stepIdx: 0, key, dispatchNo: 1 });
      await new Promise((r) => setTimeout(r, 1_000));
    } finally {
      await queue.close();
    }
    const after = await readStep(env.db, key);
    expect(after?.status).toBe('CONFIRMED');
    expect(after?.attempts).toBe(1);
    expect(await effectsFor(fx, key)).toHaveLength(1);
  });

  it('sends nothing for a step whose run is COMPENSATING: NOT_EXECUTED with the reason, while a RUNNING twin is sent', async () => {
    const twin = (runId: string) =>
      createIntent(env, {
        runId,
        stepIdx: 0,
        tool: 'send_notice',
        args: { to: 'ada@example.com', text: 'your refund is on its way' },
        unrelayed: true,
      });
    const live = await twin('run-live');
    const unwound = await twin('run-unwound');
    // The unwind raced the job: the run compensates, its step is still INTENDED with its job on the queue.
    await env.db
      .updateTable('runs')
      .set({ status: 'COMPENSATING' })
      .where('run_id', '=', 'run-unwound')
      .execute();
    const queue = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
    try {
      for (const [runId, row] of [
        ['run-live', live],
        ['run-unwound', unwound],
      ] as const)
        await publishExecute(queue, row.idempotency_key, {
          runId,
          stepIdx: 0,
          key: row.idempotency_key,
          dispatchNo: 1,
        });
    } finally {
      await queue.close();
    }
    const sent = await waitForStatus(env.db, live.idempotency_key, [StepStatus.CONFIRMED]);
    expect(sent.attempts).toBe(1);
    expect(await effectsFor(fx, live.idempotency_key)).toHaveLength(1);

    const withdrawn = await waitForStatus(env.db, unwound.idempotency_key, [StepStatus.NOT_EXECUTED]);
    expect(withdrawn).toMatchObject({ attempts: 0, lease_owner: null });
    expect(await effectsFor(fx, unwound.idempotency_key)).toHaveLength(0);
    const events = await eventsOf(env.db, 'run-unwound', 0);
    expect(events.map((e) => [e.kind, e.from_status, e.to_status])).toEqual([
      ['transition', null, 'INTENDED'],
      ['transition', 'INTENDED', 'NOT_EXECUTED'],
    ]);
    expect(events[1]?.cause).toBe(runNotRunningCause('COMPENSATING'));
  });

  it('does not run a step whose lease another worker holds; after the lease lapses it is UNKNOWN', async () => {
    // A step claimed by a worker that will never record (as if it were stuck or dead)...
    const row = await createIntent(env, {
      runId: 'run-held',
      stepIdx: 0,
      tool: 'create_note',
      args: { orderId: 'h', text: 'x' },
      unrelayed: true,
    });
    const claim = await claimStep(env.db, {
      runId: row.run_id,
      stepIdx: row.step_idx,
      key: row.idempotency_key,
      worker: 'ghost-worker',
      leaseMs: 2_000,
      jobId: 'manual',
      schema: env.schema,
    });
    expect(claim.kind).toBe('claimed');
    // ...and the job for it delivered while that lease is live.
    const queue = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
    try {
      await publishExecute(queue, row.idempotency_key, {
        runId: 'run-held',
        stepIdx: 0,
        key: row.idempotency_key,
        dispatchNo: 1,
      });
    } finally {
      await queue.close();
    }
    await new Promise((r) => setTimeout(r, 1_000));
    const during = await readStep(env.db, row.idempotency_key);
    expect(during?.status).toBe('INTENDED');
    expect(during?.lease_owner).toBe('ghost-worker');
    expect(during?.attempts).toBe(1);
    expect(await effectsFor(fx, row.idempotency_key)).toHaveLength(0);
    // The redelivered job looks again once the lease has lapsed: the ghost may have reached the system.
    const after = await waitForStatus(env.db, row.idempotency_key, [StepStatus.UNKNOWN], 10_000);
    expect(after.error).toMatchObject({ code: 'LEASE_EXPIRED' });
    expect(after.attempts).toBe(1);
    expect(await effectsFor(fx, row.idempotency_key)).toHaveLength(0);
  });
});
