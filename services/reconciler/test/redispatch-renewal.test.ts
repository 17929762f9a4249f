/**
 * A re-dispatch under an authority that lapsed, through real processes (relay, executor, reconciler): the
 * first attempt times out without reaching the system, the reconciler proves it absent, and, the run's
 * authority having lapsed (`policy.authorityTtlMs` past `runs.authority_at`), sends nothing: the step stays
 * NOT_EXECUTED and the run gets one pending `renewal` showing the re-dispatch as its recovery plan. An
 * operator's approval sends the step again (same key, one effect); a rejection stops the run for a person.
 */
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApprovalKind,
  ApprovalStatus,
  createRun,
  decideApproval,
  ReviewStatus,
  StepStatus,
  type ApprovalRow,
} from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { closeFixtureTestEnv, createFixtureTestEnv } from '../../../test/fixtures/fixture-test-env.js';
import { countEffects, FaultKind, injectFault } from '../../../test/fixtures/effect-tools.js';
import {
  createIntent,
  startRole,
  waitFor,
  waitForStatus,
  type RoleProcess,
} from '../../../test/fixtures/dispatcher-processes.js';
import { startReconciler } from './reconciler-harness.js';

let env: TestEnv;
let fx: Kysely<unknown>;
const procs: RoleProcess[] = [];
const ROLE_ENV = { FIXTURE_TOOL_TIMEOUT_MS: '1000' };

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('renewal'));
  procs.push(startRole(env, 'relay', ROLE_ENV), startRole(env, 'executor', ROLE_ENV), startReconciler(env));
});
afterAll(() => closeFixtureTestEnv(env, procs));

/** A run whose authority (one minute) was granted two minutes ago, and its step whose first call hangs. */
async function lapsedRunWithLostCall(runId: string) {
  await createRun(env.db, { runId, tenantId: 'acme', metadata: {}, policy: { authorityTtlMs: 60_000 } });
  await env.db
    .updateTable('runs')
    .set({ authority_at: sql<Date>`now() - interval '2 minutes'` })
    .where('run_id', '=', runId)
    .execute();
  await injectFault(fx, 'create_note', FaultKind.TIMEOUT, 1);
  const row = await createIntent(env, {
    runId,
    stepIdx: 0,
    tool: 'create_note',
    args: { orderId: runId, text: 'lost once' },
  });
  const renewal = await waitFor(
    `a pending renewal of ${runId}`,
    () =>
      env.db
        .selectFrom('approvals')
        .selectAll()
        .where('run_id', '=', runId)
        .where('kind', '=', ApprovalKind.RENEWAL)
        .where('status', '=', ApprovalStatus.PENDING)
        .executeTakeFirst(),
    30_000,
  );
  return { key: row.idempotency_key, renewal };
}

const decide = (a: ApprovalRow, decision: 'approve' | 'reject') =>
  env.db.transaction().execute((trx) =>
    decideApproval(trx, {
      tenantId: 'acme',
      approvalId: a.id,
      decision,
      hash: a.hash,
      comment: null,
      actor: 'olga',
      schema: env.schema,
    }),
  );

const outboxOf = (key: string) =>
  env.db.selectFrom('outbox').select('job_id').where('idempotency_key', '=', key).execute();

describe('a re-dispatch after the run authority lapsed', () => {
  it('waits for a renewal, sending nothing; approved, the step is sent again once', async () => {
    const runId = 'renew-approved';
    const { key, renewal } = await lapsedRunWithLostCall(runId);
    expect(renewal.evidence).toMatchObject({
      recoveryPlan: [{ action: 'redispatch', stepIdx: 0, tool: 'create_note', key }],
      planHash: renewal.hash,
    });
    // The reconciler proved the call absent and sent nothing: one dispatch, no effect, NOT_EXECUTED.
    await new Promise((r) => setTimeout(r, 1_500));
    const waiting = await waitForStatus(env.db, key, [StepStatus.NOT_EXECUTED], 5_000);
    expect(waiting.attempts).toBe(1);
    expect(await outboxOf(key)).toHaveLength(1);
    expect(await countEffects(fx)).toBe(0);

    expect((await decide(renewal, 'approve')).kind).toBe('decided');
    const done = await waitForStatus(env.db, key, [StepStatus.CONFIRMED], 20_000);
    expect(done.attempts).toBe(2);
    expect(await outboxOf(key)).toHaveLength(2);
    expect(await countEffects(fx)).toBe(1);
    const run = await env.db
      .selectFrom('runs')
      .select(['status', sql<boolean>`authority_at > now() - interval '1 minute'`.as('renewed')])
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(run).toEqual({ status: 'RUNNING', renewed: true });
  });

  it('rejected: the run ends MANUAL_INTERVENTION with a case; the step is never sent again', async () => {
    const runId = 'renew-rejected';
    const before = await countEffects(fx);
    const { key, renewal } = await lapsedRunWithLostCall(runId);
    await waitForStatus(env.db, key, [StepStatus.NOT_EXECUTED], 5_000);
    expect((await decide(renewal, 'reject')).kind).toBe('decided');
    const run = await env.db
      .selectFrom('runs')
      .select(['status', 'status_reason'])
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(run.status).toBe('MANUAL_INTERVENTION');
    expect(run.status_reason).toContain(renewal.id);
    const cases = await env.db.selectFrom('cases').selectAll().where('run_id', '=', runId).execute();
    expect(cases).toEqual([expect.objectContaining({ step_idx: null, status: ReviewStatus.OPEN })]);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await outboxOf(key)).toHaveLength(1);
    expect(await countEffects(fx)).toBe(before);
  });
});
