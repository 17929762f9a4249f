/**
 * A poison call through real processes (relay, executor, reconciler): every attempt times out without
 * reaching the system, the reconciler proves each absent and sends the step again, and after
 * SAGA_MAX_REDISPATCHES (default 3) re-dispatches the step goes to MANUAL_INTERVENTION with a case listing
 * each dispatch and why it came back, instead of looping forever. The reconciler runs with
 * SAGA_REDISPATCH_MIN_SPAN_MS=0, so the count alone decides (its loops take a second or two each, under the
 * default span of a minute they would go on to three times the budget: core's redispatch-budget.test.ts);
 * with the variable unread the step would be sent nine times, not three.
 */
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_REDISPATCHES, ReviewStatus, StepEventKind, StepStatus } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { closeFixtureTestEnv, createFixtureTestEnv } from '../../../test/fixtures/fixture-test-env.js';
import { countEffects, FaultKind, injectFault } from '../../../test/fixtures/effect-tools.js';
import {
  createIntent,
  eventsOf,
  startRole,
  waitForStatus,
  type RoleProcess,
} from '../../../test/fixtures/dispatcher-processes.js';
import { startReconciler } from './reconciler-harness.js';

let env: TestEnv;
let fx: Kysely<unknown>;
const procs: RoleProcess[] = [];
const ROLE_ENV = { FIXTURE_TOOL_TIMEOUT_MS: '1000' };

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('budget'));
  procs.push(
    startRole(env, 'relay', ROLE_ENV),
    startRole(env, 'executor', ROLE_ENV),
    startReconciler(env, { SAGA_REDISPATCH_MIN_SPAN_MS: '0' }),
  );
});
afterAll(() => closeFixtureTestEnv(env, procs));

describe('the re-dispatch budget', () => {
  it('stops a poison step after N re-dispatches, with a case carrying each dispatch', async () => {
    // Every call of create_note hangs until its timeout: the effect is never made.
    await injectFault(fx, 'create_note', FaultKind.TIMEOUT, 20);
    const runId = 'poison';
    const row = await createIntent(env, {
      runId,
      stepIdx: 0,
      tool: 'create_note',
      args: { orderId: runId, text: 'never arrives' },
    });
    const key = row.idempotency_key;

    const stopped = await waitForStatus(env.db, key, [StepStatus.MANUAL_INTERVENTION], 60_000);
    const attempts = DEFAULT_MAX_REDISPATCHES + 1;
    expect(stopped.attempts).toBe(attempts);
    expect(await countEffects(fx)).toBe(0);

    const events = await eventsOf(env.db, runId, 0);
    const redispatches = events.filter(
      (e) =>
        e.kind === StepEventKind.TRANSITION && e.from_status === 'NOT_EXECUTED' && e.to_status === 'INTENDED',
    );
    expect(redispatches).toHaveLength(DEFAULT_MAX_REDISPATCHES);
    expect(events.at(-1)).toMatchObject({ from_status: 'NOT_EXECUTED', to_status: 'MANUAL_INTERVENTION' });

    const cases = await env.db.selectFrom('cases').selectAll().where('run_id', '=', runId).execute();
    expect(cases).toHaveLength(1);
    expect(cases[0]).toMatchObject({ step_idx: 0, status: ReviewStatus.OPEN });
    const evidence = cases[0]!.evidence as {
      dispatches: { jobId: string }[];
      attempts: unknown[];
      cameBack: { cause: string }[];
    };
    expect(evidence.dispatches.map((d) => d.jobId)).toEqual(
      Array.from({ length: attempts }, (_, i) => (i === 0 ? key : `${key}-d${i + 1}`)),
    );
    expect(evidence.attempts).toHaveLength(attempts);
    expect(evidence.cameBack).toHaveLength(attempts);
    for (const b of evidence.cameBack) expect(b.cause).toMatch(/not found/);

    // Nothing is sent any more: no new message, no new attempt.
    await new Promise((r) => setTimeout(r, 3000));
    const outbox = await env.db
      .selectFrom('outbox')
      .select('job_id')
      .where('idempotency_key', '=', key)
      .execute();
    expect(outbox).toHaveLength(attempts);
    const after = await env.db
      .selectFrom('saga_log')
      .selectAll()
      .where('idempotency_key', '=', key)
      .executeTakeFirstOrThrow();
    expect(after).toMatchObject({ status: 'MANUAL_INTERVENTION', attempts });
  });
});
