import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMPENSATION_TRANSITIONS,
  CompensationStatus,
  InvalidTransitionError,
  transitionCompensation,
  valuesOf,
  type CompensationTransition,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { intendedStep } from './intended-step.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('compensation_moves');
});
afterAll(async () => env?.close());

const all = valuesOf(CompensationStatus);
const isLegal = (from: CompensationStatus, to: CompensationStatus) =>
  (COMPENSATION_TRANSITIONS[to] as readonly CompensationStatus[]).includes(from);

let n = 0;
/** A step whose compensation is in `status` (attempt 2, leased to `worker-1` until `leaseUntil`). */
async function compensationIn(
  status: CompensationStatus,
  leaseUntil = sql<Date>`now() + interval '1 minute'`,
) {
  const runId = `cmp-${n++}`;
  await intendedStep(env, runId);
  await env.db
    .insertInto('compensations')
    .values({
      run_id: runId,
      step_idx: 0,
      tenant_id: 'acme',
      tool: 'close_ticket',
      idempotency_key: `undo-${runId}`,
      args: JSON.stringify({}),
      status,
      attempts: 2,
      lease_owner: 'worker-1',
      lease_until: leaseUntil,
    })
    .execute();
  await env.db
    .updateTable('saga_log')
    .set({ compensation_status: status })
    .where('run_id', '=', runId)
    .execute();
  return runId;
}

/** What a reader sees of the step's compensation: the row, the step's mirror, the compensation events. */
async function seen(runId: string) {
  const row = await env.db
    .selectFrom('compensations')
    .select(['status', 'attempts', 'lease_owner', 'reason'])
    .where('run_id', '=', runId)
    .executeTakeFirstOrThrow();
  const step = await env.db
    .selectFrom('saga_log')
    .select('compensation_status')
    .where('run_id', '=', runId)
    .executeTakeFirstOrThrow();
  const events = await env.db
    .selectFrom('step_events')
    .select(['from_status', 'to_status', 'cause'])
    .where('run_id', '=', runId)
    .where('kind', '=', 'compensation')
    .orderBy('id')
    .execute();
  return { row, mirror: step.compensation_status, events };
}

const move = (runId: string, t: Omit<CompensationTransition, 'runId' | 'stepIdx'>) =>
  env.db
    .transaction()
    .execute((trx) => transitionCompensation(trx, { runId, stepIdx: 0, ...t }))
    .then(
      (row) => ({ moved: row }),
      (err: unknown) => ({ refused: err }),
    );

describe('compensation transitions', () => {
  it('move every legal pair with the mirror on the step and one event, and refuse every other, writing nothing', async () => {
    let legal = 0;
    for (const from of all)
      for (const to of all) {
        const runId = await compensationIn(from);
        const before = await seen(runId);
        const r = await move(runId, { to, cause: 'test: move', patch: { reason: 'moved' } });
        const after = await seen(runId);
        if (isLegal(from, to)) {
          legal++;
          expect('moved' in r && r.moved.status, `${from} → ${to}`).toBe(to);
          expect(after.row).toMatchObject({ status: to, reason: 'moved' });
          expect(after.mirror, `${from} → ${to}`).toBe(to);
          expect(after.events).toEqual([{ from_status: from, to_status: to, cause: 'test: move' }]);
        } else {
          expect('refused' in r && r.refused, `${from} → ${to}`).toBeInstanceOf(InvalidTransitionError);
          expect((r as { refused: InvalidTransitionError }).refused.from).toBe(from);
          expect(after, `${from} → ${to}`).toEqual(before);
        }
      }
    // running ← 3, compensated ← 4, unknown ← 1, failed ← 4, skipped ← 1, awaiting_approval ← 1 (pending,
    // held for a person), pending ← 1 (awaiting_approval, approved).
    expect(legal).toBe(15);
  });

  it('refuse a move from a row that is not as the caller read it: another attempt count, another lease owner', async () => {
    const runId = await compensationIn(CompensationStatus.FAILED);
    const before = await seen(runId);
    const stale = await move(runId, {
      to: CompensationStatus.COMPENSATED,
      onlyFrom: [CompensationStatus.FAILED],
      atAttempts: 1,
      cause: 'test: a pass that read attempt 1',
    });
    expect('refused' in stale && stale.refused).toBeInstanceOf(InvalidTransitionError);
    const notMine = await move(runId, {
      to: CompensationStatus.COMPENSATED,
      leaseOwner: 'worker-2',
      cause: 'test: another worker',
    });
    expect('refused' in notMine && notMine.refused).toBeInstanceOf(InvalidTransitionError);
    const narrowed = await move(runId, {
      to: CompensationStatus.COMPENSATED,
      onlyFrom: [CompensationStatus.UNKNOWN],
      cause: 'test: a pass that read unknown',
    });
    expect('refused' in narrowed && narrowed.refused).toBeInstanceOf(InvalidTransitionError);
    expect(await seen(runId)).toEqual(before);

    const current = await move(runId, {
      to: CompensationStatus.COMPENSATED,
      onlyFrom: [CompensationStatus.FAILED],
      atAttempts: 2,
      leaseOwner: 'worker-1',
      cause: 'test: as read',
    });
    expect('moved' in current && current.moved.status).toBe(CompensationStatus.COMPENSATED);
    expect((await seen(runId)).mirror).toBe(CompensationStatus.COMPENSATED);
  });

  it('expire a lease only once the database says it has run out', async () => {
    const expire = (runId: string) =>
      move(runId, {
        to: CompensationStatus.UNKNOWN,
        onlyFrom: [CompensationStatus.RUNNING],
        leaseExpired: true,
        cause: 'test: lease expired',
        patch: { lease_owner: null, lease_until: null },
      });
    const live = await compensationIn(CompensationStatus.RUNNING);
    const r = await expire(live);
    expect('refused' in r && r.refused).toBeInstanceOf(InvalidTransitionError);
    expect((await seen(live)).row).toMatchObject({
      status: CompensationStatus.RUNNING,
      lease_owner: 'worker-1',
    });

    const lapsed = await compensationIn(CompensationStatus.RUNNING, sql<Date>`now() - interval '1 second'`);
    const e = await expire(lapsed);
    expect('moved' in e && e.moved.status).toBe(CompensationStatus.UNKNOWN);
    expect(await seen(lapsed)).toMatchObject({
      row: { status: CompensationStatus.UNKNOWN, lease_owner: null },
      mirror: CompensationStatus.UNKNOWN,
    });
  });
});
