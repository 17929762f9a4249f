import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  createRun,
  recordNewIntents,
  STEP_ROW_COLUMNS,
  stepKey,
  stepRowColumns,
  type NewIntent,
  type SagaTrx,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { newIntent } from './intended-step.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('newintents');
});
afterAll(async () => env?.close());

const GRACE_MS = 2_000;

function intent(
  runId: string,
  stepIdx: number,
  args: Record<string, unknown> = { orderId: runId },
): NewIntent {
  const key = stepKey(runId, stepIdx, 'create_ticket');
  return newIntent(runId, stepIdx, {
    args,
    compensation: { tool: 'close_ticket', toolVersion: 1, args: { ref: 'x' }, key: `${key}:c` },
    dependsOn: stepIdx > 0 ? [0] : null,
  });
}

const newRun = (runId: string, tenantId = 'acme') => createRun(env.db, { runId, tenantId, metadata: {} });

/**
 * A transaction that takes a run's row (`lock`) and holds it until `release()`, which ends it: committed,
 * or rolled back when `end` says so. Resolves once the row is held.
 */
async function holdRun(lock: (trx: SagaTrx) => Promise<unknown>, end: 'commit' | 'rollback' = 'commit') {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const holder = env.db
    .transaction()
    .execute(async (trx) => {
      await lock(trx);
      locked();
      await released;
      if (end === 'rollback') throw new Error('rolled back');
    })
    .catch((err: unknown) => {
      if (end !== 'rollback') throw err;
    });
  await Promise.race([isLocked, holder]);
  return {
    async release() {
      release();
      await holder;
    },
  };
}

async function written(runId: string) {
  const steps = await env.db.selectFrom('saga_log').selectAll().where('run_id', '=', runId).execute();
  const events = await env.db
    .selectFrom('step_events')
    .select(['step_idx', 'kind', 'from_status', 'to_status', 'cause', 'detail'])
    .where('run_id', '=', runId)
    .where('step_idx', 'is not', null)
    .execute();
  const outbox = await env.db
    .selectFrom('outbox')
    .select(['step_idx', 'topic', 'job_id', 'payload', 'idempotency_key'])
    .select(sql<boolean>`relay_after > now() + interval '1 second'`.as('held'))
    .where('run_id', '=', runId)
    .execute();
  return { steps, events, outbox };
}

describe('recordNewIntents (the grouped intake)', () => {
  // That it writes for each step exactly what recordIntent writes (row, event, outbox message) is checked
  // with the other write forms' pairs in write-forms.test.ts.

  it('writes nothing for a step whose expectation fails, and the rest of the group still commits', async () => {
    for (const r of ['ni-ok-1', 'ni-taken', 'ni-unwinding', 'ni-pivot', 'ni-unknown', 'ni-ok-2'])
      await newRun(r);
    await newRun('ni-other-tenant', 'globex');
    await recordNewIntents(env.db, [intent('ni-taken', 0), intent('ni-unknown', 0)], GRACE_MS);
    await sql`UPDATE runs SET status = 'COMPENSATING' WHERE run_id = 'ni-unwinding'`.execute(env.db);
    await sql`UPDATE runs SET pivot_idx = 3 WHERE run_id = 'ni-pivot'`.execute(env.db);
    await sql`UPDATE saga_log SET status = 'UNKNOWN' WHERE run_id = 'ni-unknown'`.execute(env.db);

    const out = await recordNewIntents(
      env.db,
      [
        intent('ni-ok-1', 0),
        intent('ni-taken', 0, { orderId: 'reworded' }), // a row is there already
        intent('ni-unwinding', 0),
        intent('ni-pivot', 0),
        intent('ni-unknown', 1), // step 0 is UNKNOWN
        intent('ni-other-tenant', 0), // the run is another tenant's
        intent('ni-missing', 0), // no such run
        intent('ni-ok-2', 4),
      ],
      GRACE_MS,
    );
    expect(out.map((r) => r && `${r.run_id}/${r.step_idx}`)).toEqual([
      'ni-ok-1/0',
      null,
      null,
      null,
      null,
      null,
      null,
      'ni-ok-2/4',
    ]);
    for (const r of ['ni-unwinding', 'ni-pivot', 'ni-other-tenant', 'ni-missing'])
      expect(await written(r)).toEqual({ steps: [], events: [], outbox: [] });
    const taken = await written('ni-taken');
    expect(taken.steps.map((s) => s.args)).toEqual([{ orderId: 'ni-taken' }]);
    expect(taken.outbox).toHaveLength(1);
    expect((await written('ni-unknown')).steps.map((s) => s.step_idx)).toEqual([0]);
  });

  it('answers each step it writes as the log holds it, column by column (the row is made, not read back)', async () => {
    await newRun('ni-row');
    const trace = { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), flags: 1 };
    // Keys out of jsonb's order, a value JSON does not keep (a Date: its ISO text is stored), a member that is
    // undefined (dropped), and each JSON column set; one step claimed with a lease of a fraction of a ms.
    const args = { zeta: 1, orderId: 'ni-row', at: new Date(Date.UTC(2026, 0, 2)), gone: undefined };
    const unclaimed: NewIntent = {
      ...intent('ni-row', 0, args),
      correction: { template: 'apology', to: ['x@example.com'] },
      audience: ['customer', 'support_team'],
      decision: { model: 'm', turnId: 't' },
      trace,
    };
    const claimed: NewIntent = {
      ...intent('ni-row', 1, { orderId: 'another order' }),
      claim: { owner: 'api-1', leaseMs: 30_000.4, cause: 'api: claimed at intake' },
    };
    const answered = await recordNewIntents(env.db, [unclaimed, claimed], GRACE_MS);
    const stored = await env.db
      .selectFrom('saga_log')
      .select(stepRowColumns() as never)
      .where('run_id', '=', 'ni-row')
      .orderBy('step_idx')
      .execute();
    expect(answered).toHaveLength(2);
    expect(stored).toHaveLength(2);
    for (const [n, row] of answered.entries()) {
      const want = stored[n] as Record<string, unknown>;
      for (const column of STEP_ROW_COLUMNS) expect(row![column], column).toEqual(want[column]);
    }
    expect(answered[0]!.args).toEqual({ zeta: 1, orderId: 'ni-row', at: '2026-01-02T00:00:00.000Z' });
    expect(answered[0]!.trace_id!.toString('hex')).toBe(trace.traceId);
    expect(answered[1]!.lease_until!.getTime() - answered[1]!.created_at.getTime()).toBe(30_001);
  });

  it('writes one step once when a group holds it twice, answering only the item it wrote', async () => {
    await newRun('ni-twice');
    const out = await recordNewIntents(
      env.db,
      [intent('ni-twice', 0, { orderId: 'first' }), intent('ni-twice', 0, { orderId: 'second' })],
      GRACE_MS,
    );
    const w = await written('ni-twice');
    expect(w.steps).toHaveLength(1);
    expect(w.outbox).toHaveLength(1);
    expect(w.events).toHaveLength(1);
    const answered = out.filter((r) => r !== null);
    expect(answered).toHaveLength(1);
    expect(answered[0]!.args).toEqual(w.steps[0]!.args);
  });

  it('writes nothing for a duplicate of an earlier step, or of another item of the group', async () => {
    await newRun('ni-dup');
    expect(await recordNewIntents(env.db, [intent('ni-dup', 0, { orderId: 'a' })], GRACE_MS)).toHaveLength(1);
    await sql`UPDATE saga_log SET status = 'CONFIRMED' WHERE run_id = 'ni-dup'`.execute(env.db);
    const repeatable = { ...intent('ni-dup', 3, { orderId: 'a' }), operation: null };
    const out = await recordNewIntents(
      env.db,
      [
        intent('ni-dup', 1, { orderId: 'a' }), // step 0 is this operation, CONFIRMED
        intent('ni-dup', 2, { orderId: 'b' }), // another order
        repeatable, // a repeatable tool: never a duplicate
        intent('ni-dup', 4, { orderId: 'c' }), // c twice in one group: neither is written
        intent('ni-dup', 5, { orderId: 'c' }),
      ],
      GRACE_MS,
    );
    expect(out.map((r) => r?.step_idx ?? null)).toEqual([null, 2, 3, null, null]);
    const w = await written('ni-dup');
    expect(w.steps.map((s) => s.step_idx).sort()).toEqual([0, 2, 3]);
    expect(w.events).toHaveLength(3);
    expect(w.outbox).toHaveLength(3);
  });

  it('lets the operation of an earlier FAILED, NOT_EXECUTED or REJECTED step through', async () => {
    for (const status of ['FAILED', 'NOT_EXECUTED', 'REJECTED', 'UNKNOWN', 'MANUAL_INTERVENTION']) {
      const runId = `ni-after-${status.toLowerCase()}`;
      await newRun(runId);
      await recordNewIntents(env.db, [intent(runId, 0, { orderId: 'a' })], GRACE_MS);
      await sql`UPDATE saga_log SET status = ${status} WHERE run_id = ${runId}`.execute(env.db);
      // An index below the earlier step: the UNKNOWN rule looks only below, the duplicate rule at every row.
      await sql`UPDATE saga_log SET step_idx = 9 WHERE run_id = ${runId}`.execute(env.db);
      const [row] = await recordNewIntents(env.db, [intent(runId, 1, { orderId: 'a' })], GRACE_MS);
      const blocks = status === 'UNKNOWN' || status === 'MANUAL_INTERVENTION';
      expect(row?.step_idx ?? null, status).toBe(blocks ? null : 1);
    }
  });

  it('writes one of two identical new steps sent at once in two statements, both waiting for the run', async () => {
    // Both statements start (and take their snapshots) while a transaction holds the run; the one that
    // gets the lock second must still see the first one's step, committed after its snapshot.
    await newRun('ni-two-groups');
    const held = await holdRun((trx) =>
      sql`SELECT 1 FROM runs WHERE run_id = 'ni-two-groups' FOR UPDATE`.execute(trx),
    );
    const args = { orderId: 'o-1' };
    const first = recordNewIntents(env.db, [intent('ni-two-groups', 0, args)], GRACE_MS);
    const second = recordNewIntents(env.db, [intent('ni-two-groups', 1, args)], GRACE_MS);
    await new Promise((r) => setTimeout(r, 300));
    await held.release();
    const rows = [...(await first), ...(await second)];
    expect(rows.filter((r) => r !== null)).toHaveLength(1);
    expect((await written('ni-two-groups')).steps).toHaveLength(1);
  });

  it('answers every item of a group null when another statement wrote one of its steps while it waited', async () => {
    // Both statements take their snapshots while a transaction holds the run: the one that gets the lock
    // second cannot see the step the first committed, and the primary key refuses its row. Nothing of its
    // group is written (its other step too), and each item is answered null: the intake transaction decides.
    await newRun('ni-same-step');
    await newRun('ni-same-step-other');
    const held = await holdRun((trx) =>
      sql`SELECT 1 FROM runs WHERE run_id = 'ni-same-step' FOR UPDATE`.execute(trx),
    );
    const first = recordNewIntents(env.db, [intent('ni-same-step', 0, { orderId: 'first' })], GRACE_MS);
    const second = recordNewIntents(
      env.db,
      [intent('ni-same-step-other', 0), intent('ni-same-step', 0, { orderId: 'second' })],
      GRACE_MS,
    );
    await new Promise((r) => setTimeout(r, 300));
    await held.release();
    // Which statement gets the lock first is the lock queue's choice; exactly one group writes.
    const [one, two] = [await first, await second];
    const firstWon = one[0] !== null;
    const [won, lost] = firstWon ? [one, two] : [two, one];
    expect(won.every((r) => r !== null)).toBe(true);
    expect(lost.every((r) => r === null)).toBe(true);
    const w = await written('ni-same-step');
    expect(w.steps.map((s) => s.args)).toEqual([{ orderId: firstWon ? 'first' : 'second' }]);
    expect(w.events).toHaveLength(1);
    expect(w.outbox).toHaveLength(1);
    // The refused group's other step was not written either: the statement is all or nothing.
    expect((await written('ni-same-step-other')).steps).toHaveLength(firstWon ? 0 : 1);
  });

  it('waits for a transaction holding the run, and writes nothing once it committed an unwind', async () => {
    await newRun('ni-race-commit');
    await newRun('ni-race-rollback');
    for (const [runId, outcome] of [
      ['ni-race-commit', 'commit'],
      ['ni-race-rollback', 'rollback'],
    ] as const) {
      const unwind = await holdRun(
        (trx) => sql`UPDATE runs SET status = 'COMPENSATING' WHERE run_id = ${runId}`.execute(trx),
        outcome,
      );
      let settled = false;
      const intake = recordNewIntents(env.db, [intent(runId, 0)], GRACE_MS).finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(settled).toBe(false); // it waits on the run's lock
      await unwind.release();
      const [row] = await intake;
      if (outcome === 'commit') {
        expect(row).toBeNull();
        expect(await written(runId)).toEqual({ steps: [], events: [], outbox: [] });
      } else {
        expect(row).toMatchObject({ run_id: runId, status: 'INTENDED' });
        expect((await written(runId)).outbox).toHaveLength(1);
      }
    }
  });
});
