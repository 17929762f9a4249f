/**
 * The re-dispatch budget (issue 9, item 6), in core where it lives once: a step proven NOT_EXECUTED again
 * and again is sent again at most `maxRedispatches` times, then goes to MANUAL_INTERVENTION with a case
 * listing every dispatch and why it came back; a person's re-dispatch is not capped and starts the count
 * again; a republish of a lost job does not count. Loops that come back faster than the budget's span
 * (a restart storm) go on until the first re-dispatch is that old, or until three times the budget.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CaseAction,
  claimStep,
  DEFAULT_REDISPATCH_MIN_SPAN_MS,
  REDISPATCH_HARD_CAP_FACTOR,
  redispatchStep,
  republishUnclaimedIntents,
  resolveCase,
  ReviewStatus,
  StepStatus,
  transitionStep,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { intendedStep, stepOfKey } from './intended-step.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('budget');
});
afterAll(async () => env?.close());

const MAX = 3;

async function intent(runId: string): Promise<string> {
  const row = await intendedStep(env, runId);
  return row.idempotency_key;
}

/**
 * One attempt that never reached the system, as the reconciler proves it: claimed by an executor that then
 * vanished, its lease lapsed, the lookup found nothing; then the harness's re-dispatch.
 */
async function failOnceAndRedispatch(
  runId: string,
  key: string,
  n: number,
  // The count alone decides unless a test asks for the span (`{}`: the default, as the roles have it).
  span: { readonly minSpanMs?: number } = { minSpanMs: 0 },
) {
  const claim = await claimStep(env.db, {
    ...(await stepOfKey(env, key)),
    key,
    worker: `w${n}`,
    leaseMs: 10_000,
    jobId: key,
    schema: env.schema,
  });
  expect(claim.kind).toBe('claimed');
  return env.db.transaction().execute(async (trx) => {
    await transitionStep(trx, {
      runId,
      stepIdx: 0,
      to: StepStatus.NOT_EXECUTED,
      onlyFrom: [StepStatus.INTENDED],
      cause: `reconciler: not found, re-checked after the lookup lag (attempt ${n})`,
      detail: { lookups: [{ found: false, attempt: n }] },
      patch: { lease_until: null, lease_owner: null },
      schema: env.schema,
    });
    return redispatchStep(trx, {
      runId,
      stepIdx: 0,
      cause: 'reconciler: re-dispatch after the lookup proved absence',
      schema: env.schema,
      by: { kind: 'harness', maxRedispatches: MAX, ...span },
    });
  });
}

const openCases = (runId: string) =>
  env.db
    .selectFrom('cases')
    .selectAll()
    .where('run_id', '=', runId)
    .where('status', '=', ReviewStatus.OPEN)
    .execute();

describe('the re-dispatch budget', () => {
  it('sends a poison step again N times, then hands it to a person with every dispatch as evidence', async () => {
    const runId = 'poison';
    const key = await intent(runId);
    // A republish of a lost job on the way does not count against the budget.
    await sql`UPDATE outbox SET published_at = now() - interval '1 minute' WHERE idempotency_key = ${key}`.execute(
      env.db,
    );
    await sql`UPDATE saga_log SET updated_at = now() - interval '1 minute' WHERE idempotency_key = ${key}`.execute(
      env.db,
    );
    expect(await republishUnclaimedIntents(env.db, { olderThanMs: 20_000, schema: env.schema })).toHaveLength(
      1,
    );

    const sent: number[] = [];
    for (let n = 1; n <= MAX; n++) {
      const r = await failOnceAndRedispatch(runId, key, n);
      expect(r.kind).toBe('redispatched');
      if (r.kind === 'redispatched') sent.push(r.dispatchNo);
    }
    expect(sent).toEqual([3, 4, 5]); // 1 the intake, 2 the republish
    expect(await openCases(runId)).toEqual([]);

    const last = await failOnceAndRedispatch(runId, key, MAX + 1);
    expect(last).toMatchObject({
      kind: 'budget-spent',
      redispatches: MAX,
      row: { status: 'MANUAL_INTERVENTION' },
    });
    const step = await env.db
      .selectFrom('saga_log')
      .selectAll()
      .where('idempotency_key', '=', key)
      .executeTakeFirstOrThrow();
    expect(step).toMatchObject({ status: 'MANUAL_INTERVENTION', attempts: MAX + 1, lease_until: null });
    // Nothing more was enqueued.
    const outbox = await env.db
      .selectFrom('outbox')
      .select('job_id')
      .where('idempotency_key', '=', key)
      .orderBy('id')
      .execute();
    expect(outbox.map((o) => o.job_id)).toEqual([key, `${key}-d2`, `${key}-d3`, `${key}-d4`, `${key}-d5`]);

    const [c] = await openCases(runId);
    expect(c?.reason).toMatch(/re-dispatched 3 times, each attempt proven never to have reached the system/);
    const evidence = c!.evidence as {
      redispatches: number;
      dispatches: { jobId: string; dispatchNo: number }[];
      attempts: { detail: { worker: string } }[];
      cameBack: { cause: string; detail: { lookups: { attempt: number }[] } }[];
    };
    expect(evidence.redispatches).toBe(MAX);
    expect(evidence.dispatches.map((d) => d.dispatchNo)).toEqual([1, 2, 3, 4, 5]);
    expect(evidence.attempts.map((a) => a.detail.worker)).toEqual(['w1', 'w2', 'w3', 'w4']);
    expect(evidence.cameBack.map((b) => b.detail.lookups[0]!.attempt)).toEqual([1, 2, 3, 4]);
    expect(evidence.cameBack[3]!.cause).toMatch(/attempt 4/);

    // A person who finds it absent sends it again, uncapped; the harness's count starts afresh after that.
    await env.db.transaction().execute((trx) =>
      resolveCase(trx, {
        tenantId: 'acme',
        caseId: String(c!.id),
        action: CaseAction.NOT_EXECUTED,
        actor: 'ops@acme',
        comment: 'vendor was down; try again',
        schema: env.schema,
      }),
    );
    const again = await env.db
      .selectFrom('saga_log')
      .selectAll()
      .where('idempotency_key', '=', key)
      .executeTakeFirstOrThrow();
    expect(again.status).toBe('INTENDED');
    const afterPerson = await failOnceAndRedispatch(runId, key, MAX + 2);
    expect(afterPerson.kind).toBe('redispatched');
  });

  it('goes on sending a step whose loops come back fast until its first re-dispatch is the span old', async () => {
    const runId = 'storm';
    const key = await intent(runId);
    // A restart storm: four loops in well under a second, each proven absent; the default span (60 s).
    for (let n = 1; n <= MAX + 1; n++) {
      const r = await failOnceAndRedispatch(runId, key, n, {});
      expect(r.kind, `loop ${n}`).toBe('redispatched');
    }
    expect(await openCases(runId)).toEqual([]);

    // The same step a span later (its re-dispatches' events aged, as Postgres's clock would have them).
    await sql`UPDATE step_event_rows SET at = at - make_interval(secs => ${(DEFAULT_REDISPATCH_MIN_SPAN_MS + 1000) / 1000})
               WHERE run_id = ${runId}`.execute(env.db);
    const last = await failOnceAndRedispatch(runId, key, MAX + 2, {});
    expect(last).toMatchObject({
      kind: 'budget-spent',
      redispatches: MAX + 1,
      row: { status: 'MANUAL_INTERVENTION' },
    });
    expect(await openCases(runId)).toHaveLength(1);
  });

  it('stops at three times the budget however fast the loops come back (a call that kills its executor)', async () => {
    const runId = 'crash-loop';
    const key = await intent(runId);
    const cap = REDISPATCH_HARD_CAP_FACTOR * MAX;
    for (let n = 1; n <= cap; n++) {
      const r = await failOnceAndRedispatch(runId, key, n, {});
      expect(r.kind, `loop ${n}`).toBe('redispatched');
    }
    const last = await failOnceAndRedispatch(runId, key, cap + 1, {});
    expect(last).toMatchObject({ kind: 'budget-spent', redispatches: cap });
  });

  it('is not applied to a person at all', async () => {
    const runId = 'by-hand';
    const key = await intent(runId);
    for (let n = 1; n <= MAX + 2; n++) {
      await claimStep(env.db, {
        ...(await stepOfKey(env, key)),
        key,
        worker: 'w',
        leaseMs: 10_000,
        jobId: key,
        schema: env.schema,
      });
      const r = await env.db.transaction().execute(async (trx) => {
        await transitionStep(trx, {
          runId,
          stepIdx: 0,
          to: StepStatus.NOT_EXECUTED,
          onlyFrom: [StepStatus.INTENDED],
          cause: 'proved absent',
          patch: { lease_until: null, lease_owner: null },
          schema: env.schema,
        });
        return redispatchStep(trx, {
          runId,
          stepIdx: 0,
          cause: 'sent again by hand',
          schema: env.schema,
          by: { kind: 'person', actor: 'ops@acme' },
        });
      });
      expect(r.kind).toBe('redispatched');
    }
  });
});
