/**
 * The compensator's grouped statements (unwind-groups.ts) on real Postgres: one statement for the
 * compensations of several runs, each row still a compare-and-set on what its own pass read, so a row that
 * moved meanwhile is left alone while the others of its statement are written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  CompensationStatus,
  listenChannel,
  runChangedChannel,
  RunStatus,
  StepEventKind,
  type SagaDb,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { ATTEMPT_CAUSE, claimAttemptBatch } from '../src/sql/claim-attempt-batch.js';
import { finishRunsBatch } from '../src/sql/finish-runs-batch.js';
import { planCompensations } from '../src/sql/plan-compensations.js';
import { recordAttemptOutcomeBatch } from '../src/sql/record-attempt-outcome-batch.js';
import { UNWIND_REQUESTED, unwindingRun } from './unwinding-run.js';

let env: TestEnv;
let db: SagaDb;
beforeAll(async () => {
  env = await createTestEnv('comp_groups');
  db = env.db;
});
afterAll(async () => env?.close());

const eventsOf = (runId: string) =>
  db
    .selectFrom('step_events')
    .select(['kind', 'from_status', 'to_status', 'cause'])
    .where('run_id', '=', runId)
    .orderBy('id')
    .execute();
const mirrorOf = async (runId: string) =>
  (
    await db
      .selectFrom('saga_log')
      .select('compensation_status')
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow()
  ).compensation_status;
const lookupEvent = (runId: string) => ({
  runId,
  stepIdx: 0,
  kind: StepEventKind.COMPENSATION,
  cause: 'compensator: lookup by the compensation key',
  detail: { seen: 'absent' },
});

describe('grouped compensation writes', () => {
  it('plans each step once: a step planned already is not returned (the pass reads it back)', async () => {
    const a = await unwindingRun(db, 'plan-a');
    const b = await unwindingRun(db, 'plan-b');
    expect((await planCompensations(db, [a])).map((r) => r.run_id)).toEqual(['plan-a']);
    const second = await planCompensations(db, [a, b]);
    expect(second.map((r) => [r.run_id, r.status])).toEqual([['plan-b', CompensationStatus.PENDING]]);
    expect(await mirrorOf('plan-a')).toBe(CompensationStatus.PENDING);
    expect(await eventsOf('plan-a')).toHaveLength(1);
  });

  it('claims in one statement only the rows still as their pass read them; every lookup is kept, in order', async () => {
    const steps = [await unwindingRun(db, 'claim-a'), await unwindingRun(db, 'claim-b')];
    await planCompensations(db, steps);
    // claim-b was refused once; its pass read it failed after attempt 1, but another compensator has made
    // attempt 2 since (refused again): same status, not the same row.
    await db
      .updateTable('compensations')
      .set({ status: CompensationStatus.FAILED, attempts: 2 })
      .where('run_id', '=', 'claim-b')
      .execute();
    const claim = (runId: string, seenStatus: CompensationStatus, seenAttempts: number) => ({
      runId,
      stepIdx: 0,
      seenStatus,
      seenAttempts,
      leaseMs: 30_000,
      detail: { attempt: seenAttempts + 1 },
      evidence: [lookupEvent(runId)],
    });
    const rows = await claimAttemptBatch(db, 'worker-1', [
      claim('claim-b', CompensationStatus.FAILED, 1),
      claim('claim-a', CompensationStatus.PENDING, 0),
    ]);

    expect(rows.map((r) => [r.run_id, r.status, r.attempts, r.lease_owner])).toEqual([
      ['claim-a', CompensationStatus.RUNNING, 1, 'worker-1'],
    ]);
    const lease = await sql<{ ahead: boolean }>`
      SELECT lease_until > now() + interval '29 seconds' AS ahead FROM compensations
       WHERE run_id = 'claim-a'`.execute(db);
    expect(lease.rows[0]?.ahead).toBe(true);
    expect(await mirrorOf('claim-a')).toBe(CompensationStatus.RUNNING);
    expect(await mirrorOf('claim-b')).toBe(CompensationStatus.PENDING);
    const compensationEvents = async (runId: string) =>
      (await eventsOf(runId)).map((e) => [e.from_status, e.to_status, e.cause]);
    expect(await compensationEvents('claim-a')).toEqual([
      [null, CompensationStatus.PENDING, 'compensator: planned'],
      [null, null, 'compensator: lookup by the compensation key'],
      [CompensationStatus.PENDING, CompensationStatus.RUNNING, ATTEMPT_CAUSE],
    ]);
    expect(await compensationEvents('claim-b')).toEqual([
      [null, CompensationStatus.PENDING, 'compensator: planned'],
      [null, null, 'compensator: lookup by the compensation key'],
    ]);
  });

  it('records outcomes only under the caller`s lease; a lost lease writes nothing', async () => {
    const steps = [await unwindingRun(db, 'out-a'), await unwindingRun(db, 'out-b')];
    await planCompensations(db, steps);
    const claim = (runId: string) => ({
      runId,
      stepIdx: 0,
      seenStatus: CompensationStatus.PENDING,
      seenAttempts: 0,
      leaseMs: 30_000,
      detail: {},
      evidence: [],
    });
    await claimAttemptBatch(db, 'worker-1', [claim('out-a')]);
    await claimAttemptBatch(db, 'worker-2', [claim('out-b')]);
    const rows = await recordAttemptOutcomeBatch(db, 'worker-1', [
      {
        runId: 'out-a',
        stepIdx: 0,
        outcome: { to: CompensationStatus.COMPENSATED, externalRef: 'undo-a', result: { ok: true } },
        cause: 'compensator: tool returned',
        detail: {},
      },
      {
        runId: 'out-b',
        stepIdx: 0,
        outcome: {
          to: CompensationStatus.FAILED,
          error: { code: 'CLIENT_ERROR', message: 'no' },
          retryInMs: 1_000,
          reason: null,
        },
        cause: 'compensator: refused; will retry',
        detail: {},
      },
    ]);
    expect(rows.map((r) => [r.run_id, r.status, r.external_ref, r.lease_owner, r.lease_until])).toEqual([
      ['out-a', CompensationStatus.COMPENSATED, 'undo-a', null, null],
    ]);
    const b = await db
      .selectFrom('compensations')
      .select(['status', 'lease_owner'])
      .where('run_id', '=', 'out-b')
      .executeTakeFirstOrThrow();
    expect(b).toEqual({ status: CompensationStatus.RUNNING, lease_owner: 'worker-2' });
    expect(await mirrorOf('out-a')).toBe(CompensationStatus.COMPENSATED);
    expect(await mirrorOf('out-b')).toBe(CompensationStatus.RUNNING);
  });

  it('finishes only runs still COMPENSATING with the reason their pass read', async () => {
    for (const id of ['fin-a', 'fin-b', 'fin-c']) await unwindingRun(db, id);
    await db
      .updateTable('runs')
      .set({ status: RunStatus.COMPENSATED })
      .where('run_id', '=', 'fin-b')
      .execute();
    await db
      .updateTable('runs')
      .set({ status_reason: 'retried from a case' })
      .where('run_id', '=', 'fin-c')
      .execute();
    const close = (runId: string) => ({
      runId,
      to: RunStatus.COMPENSATED,
      reason: `every effect undone (${UNWIND_REQUESTED})`,
      seenReason: UNWIND_REQUESTED,
    });
    // Every run it closes is announced on the run channel (what a read waiting for the run's end hears).
    const announced: string[] = [];
    const listener = await listenChannel({
      db: { url: env.databaseUrl, schema: env.schema },
      channel: runChangedChannel(env.schema),
      onNotify: (runId) => announced.push(runId ?? ''),
    });
    const rows = await finishRunsBatch(db, [close('fin-a'), close('fin-b'), close('fin-c')]);
    expect(rows.map((r) => [r.run_id, r.status, r.status_reason])).toEqual([
      ['fin-a', RunStatus.COMPENSATED, `every effect undone (${UNWIND_REQUESTED})`],
    ]);
    await expect.poll(() => announced, { timeout: 5_000 }).toEqual(['fin-a']);
    await listener.stop();
    const c = await db
      .selectFrom('runs')
      .select(['status', 'status_reason'])
      .where('run_id', '=', 'fin-c')
      .executeTakeFirstOrThrow();
    expect(c).toEqual({ status: RunStatus.COMPENSATING, status_reason: 'retried from a case' });
    expect(await eventsOf('fin-a')).toEqual([
      {
        kind: StepEventKind.RUN_TRANSITION,
        from_status: RunStatus.COMPENSATING,
        to_status: RunStatus.COMPENSATED,
        cause: `every effect undone (${UNWIND_REQUESTED})`,
      },
    ]);
    expect(await eventsOf('fin-c')).toEqual([]);
  });
});
