import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVAL_TRANSITIONS,
  ApprovalKind,
  ApprovalStatus,
  CASE_TRANSITIONS,
  closeApproval,
  compareAndSet,
  CORRECTION_TRANSITIONS,
  CorrectionStatus,
  createApproval,
  createRun,
  InvalidApprovalTransitionError,
  InvalidCaseTransitionError,
  InvalidCorrectionTransitionError,
  isLegalApprovalTransition,
  isLegalCaseTransition,
  isLegalCorrectionTransition,
  openCase,
  reviseCorrection,
  ReviewStatus,
  STEP_TRANSITIONS,
  transitionApproval,
  transitionCase,
  transitionCorrection,
  valuesOf,
  type SagaTrx,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { intendedStep } from './intended-step.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('review_moves');
});
afterAll(async () => env?.close());

const inTrx = <T>(fn: (trx: SagaTrx) => Promise<T>) => env.db.transaction().execute(fn);
const refusal = (p: Promise<unknown>) => p.then(() => undefined).catch((e: unknown) => e);
const eventsOf = async (runId: string) =>
  (await env.db.selectFrom('step_events').select('id').where('run_id', '=', runId).execute()).length;

describe('approval transitions', () => {
  const all = valuesOf(ApprovalStatus);
  it('cover every status, and leave only pending', () => {
    expect(Object.keys(APPROVAL_TRANSITIONS).sort()).toEqual([...all].sort());
    for (const to of all)
      for (const from of all)
        expect(isLegalApprovalTransition(from, to), `${from} → ${to}`).toBe(
          from === ApprovalStatus.PENDING && to !== ApprovalStatus.PENDING,
        );
  });

  let n = 0;
  /** A pending approval of its own run, moved to `status` the legal way. */
  async function approvalIn(status: ApprovalStatus) {
    const runId = `apr-${n++}`;
    await createRun(env.db, { runId, tenantId: 'acme', metadata: {} });
    const a = await inTrx((trx) =>
      createApproval(trx, {
        tenantId: 'acme',
        runId,
        kind: ApprovalKind.PIVOT,
        steps: [],
        summary: 'refund and tell the customer',
        evidence: {},
        expiresAt: new Date(Date.now() + 60_000),
      }),
    );
    if (status === ApprovalStatus.PENDING) return a;
    return inTrx((trx) => transitionApproval(trx, { id: a.id, to: status, actor: 'ops', comment: 'setup' }));
  }

  it('refuses every illegal move from every status, leaving the row and the history as they were', async () => {
    let refused = 0;
    for (const from of all)
      for (const to of all) {
        if (isLegalApprovalTransition(from, to)) continue;
        const before = await approvalIn(from);
        const events = await eventsOf(before.run_id);
        const err = await refusal(
          inTrx((trx) => transitionApproval(trx, { id: before.id, to, actor: 'mallory', comment: 'again' })),
        );
        expect(err, `${from} → ${to}`).toBeInstanceOf(InvalidApprovalTransitionError);
        expect((err as InvalidApprovalTransitionError).from).toBe(from);
        const after = await env.db
          .selectFrom('approvals')
          .selectAll()
          .where('id', '=', before.id)
          .executeTakeFirstOrThrow();
        expect(after).toEqual(before);
        expect(await eventsOf(before.run_id)).toBe(events);
        refused++;
      }
    // Every move out of the four final statuses, and pending → pending.
    expect(refused).toBe(4 * all.length + 1);
  });

  it('records a decision with who, when and the comment, once: a second close finds nothing pending', async () => {
    const a = await approvalIn(ApprovalStatus.PENDING);
    const approved = await inTrx((trx) =>
      closeApproval(trx, { approval: a, to: ApprovalStatus.APPROVED, actor: 'ada', comment: 'looks right' }),
    );
    expect(approved).toMatchObject({ status: 'approved', decided_by: 'ada', comment: 'looks right' });
    expect(approved!.decided_at).toBeInstanceOf(Date);
    const again = await inTrx((trx) =>
      closeApproval(trx, { approval: a, to: ApprovalStatus.REJECTED, actor: 'bob', comment: 'no' }),
    );
    expect(again).toBeNull();
    const events = await env.db
      .selectFrom('step_events')
      .selectAll()
      .where('run_id', '=', a.run_id)
      .where('kind', '=', 'decision')
      .execute();
    expect(events.map((e) => [e.from_status, e.to_status, e.actor])).toEqual([
      ['pending', 'approved', 'ada'],
    ]);
  });
});

describe('case transitions', () => {
  const all = valuesOf(ReviewStatus);
  it('cover every status, and let only open be resolved', () => {
    expect(Object.keys(CASE_TRANSITIONS).sort()).toEqual([...all].sort());
    for (const to of all)
      for (const from of all)
        expect(isLegalCaseTransition(from, to), `${from} → ${to}`).toBe(
          from === ReviewStatus.OPEN && to === ReviewStatus.RESOLVED,
        );
  });

  let n = 0;
  async function caseIn(status: ReviewStatus) {
    const runId = `case-${n++}`;
    await createRun(env.db, { runId, tenantId: 'acme', metadata: {} });
    await inTrx((trx) =>
      openCase(trx, { runId, stepIdx: null, tenantId: 'acme', reason: 'needs a person', evidence: {} }),
    );
    const c = await env.db
      .selectFrom('cases')
      .selectAll()
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    if (status === ReviewStatus.OPEN) return c;
    return inTrx((trx) =>
      transitionCase(trx, {
        id: String(c.id),
        to: status,
        set: { resolved_by: 'ops', resolved_at: sql<Date>`now()` },
      }),
    );
  }

  it('refuses every illegal move, leaving the row as it was', async () => {
    let refused = 0;
    for (const from of all)
      for (const to of all) {
        if (isLegalCaseTransition(from, to)) continue;
        const before = await caseIn(from);
        const err = await refusal(
          inTrx((trx) => transitionCase(trx, { id: String(before.id), to, set: { resolved_by: 'mallory' } })),
        );
        expect(err, `${from} → ${to}`).toBeInstanceOf(InvalidCaseTransitionError);
        expect((err as InvalidCaseTransitionError).from).toBe(from);
        const after = await env.db
          .selectFrom('cases')
          .selectAll()
          .where('id', '=', String(before.id))
          .executeTakeFirstOrThrow();
        expect(after).toEqual(before);
        refused++;
      }
    expect(refused).toBe(3);
  });
});

describe('correction transitions, moved by compare-and-set', () => {
  const all = valuesOf(CorrectionStatus);
  let n = 0;
  /** An open correction of a step of its own run, moved to `status` the legal way. */
  async function correctionIn(status: CorrectionStatus) {
    const runId = `corr-${n++}`;
    await intendedStep(env, runId);
    const c = await env.db
      .insertInto('corrections')
      .values({
        run_id: runId,
        step_idx: 0,
        tenant_id: 'acme',
        command: JSON.stringify({ template: 'email_sent_in_error', to: 'ada@example.com', vars: {} }),
        audience: ['customer'],
        status: CorrectionStatus.OPEN,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const id = String(c.id);
    const move = (to: CorrectionStatus) =>
      inTrx((trx) => transitionCorrection(trx, { id, to, cause: 'setup' }));
    const path: Record<CorrectionStatus, CorrectionStatus[]> = {
      open: [],
      sending: ['sending'],
      unknown: ['sending', 'unknown'],
      sent: ['sending', 'sent'],
      dismissed: ['dismissed'],
    };
    let row = c;
    for (const s of path[status]) row = await move(s);
    return row;
  }

  it('refuse every illegal move from every status, leaving the row and the history as they were', async () => {
    let refused = 0;
    for (const from of all)
      for (const to of all) {
        if (isLegalCorrectionTransition(from, to)) continue;
        const before = await correctionIn(from);
        const events = await eventsOf(before.run_id);
        const err = await refusal(
          inTrx((trx) =>
            transitionCorrection(trx, { id: String(before.id), to, cause: 'test', patch: { comment: 'x' } }),
          ),
        );
        expect(err, `${from} → ${to}`).toBeInstanceOf(InvalidCorrectionTransitionError);
        expect((err as InvalidCorrectionTransitionError).from).toBe(from);
        const after = await env.db
          .selectFrom('corrections')
          .selectAll()
          .where('id', '=', String(before.id))
          .executeTakeFirstOrThrow();
        expect(after).toEqual(before);
        expect(await eventsOf(before.run_id)).toBe(events);
        refused++;
      }
    const legal = Object.values(CORRECTION_TRANSITIONS).reduce((k, from) => k + from.length, 0);
    expect(refused).toBe(all.length * all.length - legal);
  });

  it('make an edit the move open → open, by compare-and-set on the version read', async () => {
    expect(isLegalCorrectionTransition(CorrectionStatus.OPEN, CorrectionStatus.OPEN)).toBe(true);
    const c = await correctionIn(CorrectionStatus.OPEN);
    const edited = await inTrx((trx) =>
      reviseCorrection(trx, {
        id: String(c.id),
        version: c.version,
        command: { vars: { v: 2 } },
        actor: 'ada',
      }),
    );
    expect(edited).toMatchObject({ status: 'open', version: c.version + 1, command: { vars: { v: 2 } } });
    // An edit of the version before is refused: someone edited it first.
    const stale = await refusal(
      inTrx((trx) =>
        reviseCorrection(trx, {
          id: String(c.id),
          version: c.version,
          command: { vars: { v: 3 } },
          actor: 'bob',
        }),
      ),
    );
    expect(stale).toBeInstanceOf(InvalidCorrectionTransitionError);
    const now = await env.db
      .selectFrom('corrections')
      .selectAll()
      .where('id', '=', String(c.id))
      .executeTakeFirstOrThrow();
    expect(now).toEqual(edited);
  });
});

describe('compareAndSet', () => {
  it('refuses a move asked only from illegal sources from the table alone, naming the real status', async () => {
    const step = await intendedStep(env, 'cas-illegal');
    const r = await inTrx((trx) =>
      compareAndSet(trx, {
        table: 'saga_log',
        key: { run_id: 'cas-illegal', step_idx: 0 },
        transitions: STEP_TRANSITIONS,
        to: 'FAILED',
        // FAILED is entered only from INTENDED: UNKNOWN is dropped, nothing is left to move from.
        onlyFrom: ['UNKNOWN'],
        set: { external_ref: 'should-not-be-written' },
      }),
    );
    expect(r).toEqual({ moved: false, from: 'INTENDED' });
    const [row] = await env.db
      .selectFrom('saga_log')
      .selectAll()
      .where('run_id', '=', 'cas-illegal')
      .execute();
    expect(row).toEqual(step);
  });

  it('refuses a missing row with from null, and a move without a key before any statement', async () => {
    const missing = await inTrx((trx) =>
      compareAndSet(trx, {
        table: 'corrections',
        key: { id: '987654321' },
        transitions: CORRECTION_TRANSITIONS,
        to: 'dismissed',
      }),
    );
    expect(missing).toEqual({ moved: false, from: null });
    await expect(
      inTrx((trx) =>
        compareAndSet(trx, { table: 'cases', key: {}, transitions: CASE_TRANSITIONS, to: 'resolved' }),
      ),
    ).rejects.toThrow(/needs the row's key/);
  });
});
