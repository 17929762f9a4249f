/**
 * A bound run's invariant at its forward end (`completeCheckedRun`), on real Postgres, with an invariant
 * whose answer the test sets: it holds → COMPLETED; it fails → MANUAL_INTERVENTION with the clause and a
 * case, counted as a violation; a later end on which it holds restores it and counts the time; a lookup
 * that cannot answer, or a check the steps moved past, moves nothing and writes nothing; an unbound run
 * ends as before, its checker never called.
 */
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ApprovalKind,
  ApprovalStatus,
  checkRunInvariant,
  completeCheckedRun,
  completeRun,
  createLogger,
  createSagaRegistry,
  createToolRegistry,
  defineSaga,
  defineTool,
  followUpRun,
  InvariantUnverifiedError,
  registerDefinitionGauges,
  RunStatus,
  transitionRun,
  type AnyTool,
  type InvariantChecker,
  type InvariantRun,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { intendedStep } from './intended-step.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('invariant_at_end');
});
afterAll(async () => env?.close());

/** What the invariant answers next, and every run it was asked about. */
let answer: 'holds' | 'fails' | 'throws' = 'holds';
const asked: InvariantRun[] = [];

const readOrder = defineTool({
  name: 'read_order',
  class: 'pure',
  version: 1,
  args: z.object({}),
  execute: () => Promise.resolve({ externalRef: null, result: {} }),
}) as AnyTool;
const definitions = createSagaRegistry(createToolRegistry([readOrder]), [
  defineSaga({
    name: 'probe',
    version: 1,
    steps: [{ id: 'read_order', tool: 'read_order' }],
    invariant: async (run, lookups) => {
      asked.push(run);
      if (answer === 'throws') await lookups.shipmentsOf!('o-1'); // not exported: cannot answer
      return answer === 'holds' ? { holds: true } : { holds: false, clause: 'shipment shp_1 is live' };
    },
  }),
]);
const checker: InvariantChecker = {
  definitions,
  lookups: {},
  logger: createLogger({ level: 'silent', name: 'invariant-test' }),
};

/** A run of tenant acme with one CONFIRMED step, bound to `probe` unless `bound` is false. */
async function settledRun(runId: string, bound = true): Promise<void> {
  await intendedStep(env, runId);
  await env.db.updateTable('saga_log').set({ status: 'CONFIRMED' }).where('run_id', '=', runId).execute();
  if (bound)
    await env.db
      .updateTable('runs')
      .set({ definition_name: 'probe', definition_version: 1 })
      .where('run_id', '=', runId)
      .execute();
}

async function gauges(): Promise<Record<string, number>> {
  const registry = new Registry();
  registerDefinitionGauges(registry, env.db, { definitions: ['probe'] });
  const out: Record<string, number> = {};
  for (const m of await registry.getMetricsAsJSON())
    for (const v of m.values)
      if (
        v.labels.definition === 'probe' &&
        (v.labels.status === undefined || v.labels.status === 'COMPLETED')
      )
        out[m.name] = v.value;
  return out;
}

const rowsOf = async (runId: string) => ({
  cases: await env.db.selectFrom('cases').selectAll().where('run_id', '=', runId).execute(),
  events: (await env.db.selectFrom('step_events').select('id').where('run_id', '=', runId).execute()).length,
});

describe('the invariant at a bound run forward end', () => {
  it('fails → MANUAL_INTERVENTION with the clause and a case; holding later restores it, timed', async () => {
    await settledRun('inv-fail');
    answer = 'fails';
    const failed = await completeCheckedRun(env.db, 'acme', 'inv-fail', checker);
    expect(failed.status).toBe(RunStatus.MANUAL_INTERVENTION);
    expect(failed.status_reason).toBe('invariant of probe@1 failed: shipment shp_1 is live');
    expect((await rowsOf('inv-fail')).cases).toEqual([
      expect.objectContaining({
        step_idx: null,
        evidence: { definition: 'probe@1', ending: 'COMPLETED', clause: 'shipment shp_1 is live' },
      }),
    ]);
    expect(asked.at(-1)).toMatchObject({
      runId: 'inv-fail',
      ending: 'COMPLETED',
      definition: { name: 'probe' },
    });
    expect(await gauges()).toMatchObject({
      saga_invariant_violations: 1,
      saga_invariant_open_violations: 1,
      saga_invariant_restored: 0,
      saga_definition_manual_interventions: 1,
    });

    // A person repairs the systems and sends the run back; the next end finds the invariant holding.
    await env.db
      .transaction()
      .execute((trx) =>
        transitionRun(trx, { runId: 'inv-fail', to: RunStatus.RUNNING, reason: 'repaired by hand' }),
      );
    answer = 'holds';
    const done = await completeCheckedRun(env.db, 'acme', 'inv-fail', checker);
    expect(done.status).toBe(RunStatus.COMPLETED);
    const after = await gauges();
    expect(after).toMatchObject({
      saga_invariant_violations: 1,
      saga_invariant_open_violations: 0,
      saga_invariant_restored: 1,
      saga_definition_runs: 1,
    });
    expect(after.saga_invariant_restore_seconds_sum).toBeGreaterThan(0);
  });

  it('a lookup that cannot answer moves nothing and writes nothing (503 INVARIANT_UNVERIFIED)', async () => {
    await settledRun('inv-down');
    const before = await rowsOf('inv-down');
    answer = 'throws';
    const err = await completeCheckedRun(env.db, 'acme', 'inv-down', checker).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvariantUnverifiedError);
    expect((err as InvariantUnverifiedError).httpStatus).toBe(503);
    expect((err as Error).message).toContain('no lookup "shipmentsOf"');
    expect(asked.at(-1)?.runId).toBe('inv-down'); // it was asked, and said nothing usable
    const run = await env.db
      .selectFrom('runs')
      .selectAll()
      .where('run_id', '=', 'inv-down')
      .executeTakeFirstOrThrow();
    expect(run.status).toBe(RunStatus.RUNNING);
    expect(await rowsOf('inv-down')).toEqual(before);
    // Without lookups at all (a process that cannot check) it is the same: nothing moves.
    answer = 'holds';
    await expect(completeCheckedRun(env.db, 'acme', 'inv-down', undefined)).rejects.toBeInstanceOf(
      InvariantUnverifiedError,
    );
  });

  it('a check the steps moved past is not applied', async () => {
    await settledRun('inv-stale');
    answer = 'holds';
    const check = await checkRunInvariant(env.db, { runId: 'inv-stale' }, 'COMPLETED', checker);
    expect(check.kind).toBe('holds');
    await env.db
      .updateTable('saga_log')
      .set({ updated_at: new Date(Date.now() + 60_000) })
      .where('run_id', '=', 'inv-stale')
      .execute();
    const err = await env.db
      .transaction()
      .execute((trx) => completeRun(trx, 'acme', 'inv-stale', check))
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ stale: true });
    // Checked again on the steps as they are, it ends.
    expect((await completeCheckedRun(env.db, 'acme', 'inv-stale', checker)).status).toBe(RunStatus.COMPLETED);
  });

  it('an unbound run completes as before; its checker is never asked', async () => {
    await settledRun('inv-unbound', false);
    const count = asked.length;
    answer = 'fails';
    expect((await completeCheckedRun(env.db, 'acme', 'inv-unbound', checker)).status).toBe(
      RunStatus.COMPLETED,
    );
    expect(asked.length).toBe(count);
    expect((await rowsOf('inv-unbound')).cases).toEqual([]);
  });
});

describe("the invariant at a bound run's pivot end (every commit step CONFIRMED)", () => {
  /** `runId` with its one step committed by an approved pivot. */
  async function committedPivot(runId: string): Promise<void> {
    await settledRun(runId);
    await env.db
      .insertInto('approvals')
      .values({
        id: `appr-${runId}`,
        tenant_id: 'acme',
        run_id: runId,
        kind: ApprovalKind.PIVOT,
        status: ApprovalStatus.APPROVED,
        hash: 'h',
        steps: [0],
        summary: null,
        evidence: JSON.stringify({}),
        expires_at: new Date(Date.now() + 3_600_000),
        decided_by: 'alice',
        decided_at: new Date(),
        comment: null,
      })
      .execute();
    await env.db
      .updateTable('saga_log')
      .set({ approval_id: `appr-${runId}` })
      .where('run_id', '=', runId)
      .execute();
    await env.db.updateTable('runs').set({ pivot_idx: 0 }).where('run_id', '=', runId).execute();
  }
  const statusOf = async (runId: string) =>
    (await env.db.selectFrom('runs').selectAll().where('run_id', '=', runId).executeTakeFirstOrThrow())
      .status;

  it('waits `verifying` without lookups, then ends on the check: MANUAL_INTERVENTION when it fails', async () => {
    await committedPivot('inv-pivot-fail');
    answer = 'fails';
    const count = asked.length;
    expect(await followUpRun(env.db, 'inv-pivot-fail', env.schema)).toBe('verifying');
    expect(asked.length).toBe(count);
    expect(await statusOf('inv-pivot-fail')).toBe(RunStatus.RUNNING);
    expect(await followUpRun(env.db, 'inv-pivot-fail', env.schema, checker)).toBe('violated');
    const run = await env.db
      .selectFrom('runs')
      .selectAll()
      .where('run_id', '=', 'inv-pivot-fail')
      .executeTakeFirstOrThrow();
    expect(run.status).toBe(RunStatus.MANUAL_INTERVENTION);
    expect(run.status_reason).toContain('invariant of probe@1 failed: shipment shp_1 is live');
    expect((await rowsOf('inv-pivot-fail')).cases).toHaveLength(1);
  });

  it('COMPLETED when it holds; a vendor that cannot answer leaves it RUNNING for the next sweep', async () => {
    await committedPivot('inv-pivot-ok');
    answer = 'throws';
    expect(await followUpRun(env.db, 'inv-pivot-ok', env.schema, checker)).toBe('verifying');
    expect(await statusOf('inv-pivot-ok')).toBe(RunStatus.RUNNING);
    answer = 'holds';
    expect(await followUpRun(env.db, 'inv-pivot-ok', env.schema, checker)).toBe('finished');
    expect(await statusOf('inv-pivot-ok')).toBe(RunStatus.COMPLETED);
  });
});
