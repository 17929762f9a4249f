/**
 * The withdrawal of unclaimed steps when a run stops going forward (`withdraw-unclaimed-steps.ts`), through
 * each path that withdraws: an unwind (`requestUnwind`), a stop for a person (`stopForPerson`), and an
 * executor's claim of a step whose run is unwinding (`claimStep`). A step never sent becomes NOT_EXECUTED
 * ("nothing to undo"); a step re-dispatched after an earlier send becomes UNKNOWN, because that send may
 * still commit (a vendor that dedupes by key is sent again after its lookup lag, before its horizon), and
 * the compensator must look it up by key instead of skipping it. A step under a live lease is left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimStep,
  redispatchStep,
  requestUnwind,
  RunStatus,
  runNotRunningCause,
  StepStatus,
  stopForPerson,
  transitionStep,
  withdrawalCause,
  type StepRow,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { intendedStep } from './intended-step.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('withdraw');
});
afterAll(async () => env?.close());

/** The tenant `intendedStep` writes its runs under. */
const TENANT = 'acme';

/** An INTENDED `create_ticket` step at `stepIdx` of `runId` (created with its first step). */
const intent = (runId: string, stepIdx: number) =>
  intendedStep(env, runId, { stepIdx, args: { orderId: `${runId}-${stepIdx}` } });

const claim = (row: StepRow, worker: string) =>
  claimStep(env.db, {
    runId: row.run_id,
    stepIdx: row.step_idx,
    key: row.idempotency_key,
    worker,
    leaseMs: 60_000,
    jobId: `${row.idempotency_key}:${worker}`,
    schema: env.schema,
  });

/**
 * The state the bug needs: sent once (claimed), its answer lost (UNKNOWN), nothing found past the lookup
 * lag of a vendor that dedupes by key, so sent again under its key (NOT_EXECUTED → INTENDED, a new job)
 * that no executor has claimed yet. Its first send may still commit.
 */
async function redispatchedUnclaimed(row: StepRow): Promise<void> {
  expect((await claim(row, 'w-first')).kind).toBe('claimed');
  await env.db.transaction().execute(async (trx) => {
    const at = { runId: row.run_id, stepIdx: row.step_idx, schema: env.schema };
    await transitionStep(trx, {
      ...at,
      to: StepStatus.UNKNOWN,
      onlyFrom: [StepStatus.INTENDED],
      cause: 'executor: timed out',
      patch: { lease_until: null, lease_owner: null },
    });
    await transitionStep(trx, {
      ...at,
      to: StepStatus.NOT_EXECUTED,
      onlyFrom: [StepStatus.UNKNOWN],
      cause:
        'reconciler: no effect found past the lookup lag; the vendor dedupes by key: sent again under it',
    });
    const r = await redispatchStep(trx, {
      ...at,
      cause: 'reconciler: re-dispatch under the same key (the vendor dedupes by key)',
      by: { kind: 'harness', maxRedispatches: 3 },
    });
    expect(r.kind).toBe('redispatched');
  });
}

async function stepsOf(runId: string) {
  return env.db
    .selectFrom('saga_log')
    .select(['step_idx', 'status', 'attempts', 'lease_owner'])
    .where('run_id', '=', runId)
    .orderBy('step_idx')
    .execute();
}

async function lastTransition(runId: string, stepIdx: number) {
  return env.db
    .selectFrom('step_events')
    .select(['from_status', 'to_status', 'cause', 'detail'])
    .where('run_id', '=', runId)
    .where('step_idx', '=', stepIdx)
    .where('kind', '=', 'transition')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
}

/** A run with step 0 never sent, step 1 re-dispatched after a send, step 2 being sent now (live lease). */
async function threeSteps(runId: string): Promise<void> {
  await intent(runId, 0);
  await redispatchedUnclaimed(await intent(runId, 1));
  expect((await claim(await intent(runId, 2), 'w-live')).kind).toBe('claimed');
}

const WITHDRAWN = [
  { step_idx: 0, status: StepStatus.NOT_EXECUTED, attempts: 0, lease_owner: null },
  { step_idx: 1, status: StepStatus.UNKNOWN, attempts: 1, lease_owner: null },
  { step_idx: 2, status: StepStatus.INTENDED, attempts: 1, lease_owner: 'w-live' },
];

describe('withdrawing the unclaimed steps of a run that stops going forward', () => {
  it('an unwind: a step never sent is NOT_EXECUTED, a re-dispatched one UNKNOWN, a leased one left', async () => {
    await threeSteps('w-unwind');
    await env.db
      .transaction()
      .execute((trx) =>
        requestUnwind(trx, { tenantId: TENANT, runId: 'w-unwind', reason: 'stop', schema: env.schema }),
      );
    expect(await stepsOf('w-unwind')).toEqual(WITHDRAWN);
    const why = 'withdrawn: run unwound: stop';
    expect(await lastTransition('w-unwind', 0)).toMatchObject({
      from_status: StepStatus.INTENDED,
      to_status: StepStatus.NOT_EXECUTED,
      cause: withdrawalCause(why, 0),
    });
    const unknown = await lastTransition('w-unwind', 1);
    expect(unknown).toMatchObject({
      from_status: StepStatus.INTENDED,
      to_status: StepStatus.UNKNOWN,
      cause: withdrawalCause(why, 1),
      detail: { attempts: 1 },
    });
    expect(unknown.cause).toMatch(/an earlier send under its key may still commit/);
  });

  it('a stop for a person withdraws the same way', async () => {
    await threeSteps('w-stop');
    await env.db.transaction().execute((trx) =>
      stopForPerson(trx, {
        runId: 'w-stop',
        tenantId: TENANT,
        reason: 'renewal rejected',
        evidence: {},
        onlyFrom: [RunStatus.RUNNING],
        schema: env.schema,
      }),
    );
    expect(await stepsOf('w-stop')).toEqual(WITHDRAWN);
    expect((await lastTransition('w-stop', 1)).cause).toBe(
      withdrawalCause('withdrawn: run stopped for a person: renewal rejected', 1),
    );
  });

  it("a re-dispatch's job that reaches an executor after the unwind began: UNKNOWN, nothing sent", async () => {
    const row = await intent('w-claim', 0);
    await redispatchedUnclaimed(row);
    // The unwind's own withdrawal skipped the row (a claim held its lock): the run is COMPENSATING already.
    await env.db
      .updateTable('runs')
      .set({ status: RunStatus.COMPENSATING })
      .where('run_id', '=', 'w-claim')
      .execute();
    const c = await claim(row, 'w-late');
    expect(c).toMatchObject({
      kind: 'run-not-running',
      runStatus: RunStatus.COMPENSATING,
      row: { status: StepStatus.UNKNOWN, attempts: 1, lease_owner: null },
    });
    expect((await lastTransition('w-claim', 0)).cause).toBe(runNotRunningCause(RunStatus.COMPENSATING, 1));
    // Its next delivery finds it UNKNOWN and sends nothing either.
    expect(await claim(row, 'w-later')).toEqual({ kind: 'not-intended', status: StepStatus.UNKNOWN });
  });
});
