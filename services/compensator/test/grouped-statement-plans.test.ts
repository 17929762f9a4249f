/**
 * The compensator's grouped statements run on its group pool, whose plans are made once per connection
 * (core's `GROUPED_STATEMENT_SETTINGS`): a plan made while the tables were empty is used while they grow.
 * This reads the plans Postgres used for each of them, made on an empty schema and on a loaded one, and
 * fails on any sequential scan or index scan without a key condition (core's `wholeReads`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { CompensationStatus, RunStatus, type SagaDb } from '@agent-saga/core';
import { createTestEnv, explainGroupPool, wholeReads, type TestEnv } from '@agent-saga/core/testing';
import { claimAttemptBatch } from '../src/sql/claim-attempt-batch.js';
import { finishRunsBatch } from '../src/sql/finish-runs-batch.js';
import { planCompensations } from '../src/sql/plan-compensations.js';
import { readRunStates } from '../src/sql/read-run-states.js';
import { recordAttemptOutcomeBatch } from '../src/sql/record-attempt-outcome-batch.js';
import { UNWIND_REQUESTED, unwindingRun } from './unwinding-run.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('comp_plans');
});
afterAll(async () => env?.close());

/** One unwind of two runs through every grouped statement, as the compensator's passes make it. */
async function unwindThroughGroups(db: SagaDb, prefix: string, round: number): Promise<void> {
  const runIds = [`${prefix}-${round}-a`, `${prefix}-${round}-b`];
  const steps = [];
  for (const r of runIds) steps.push(await unwindingRun(env.db, r));
  expect((await readRunStates(db, runIds)).size).toBe(2);
  expect(await planCompensations(db, steps)).toHaveLength(2);
  const claimed = await claimAttemptBatch(
    db,
    'w-comp',
    runIds.map((runId) => ({
      runId,
      stepIdx: 0,
      seenStatus: CompensationStatus.PENDING,
      seenAttempts: 0,
      leaseMs: 30_000,
      detail: {},
      evidence: [],
    })),
  );
  expect(claimed).toHaveLength(2);
  const recorded = await recordAttemptOutcomeBatch(
    db,
    'w-comp',
    runIds.map((runId) => ({
      runId,
      stepIdx: 0,
      outcome: { to: CompensationStatus.COMPENSATED, externalRef: `undo-${runId}`, result: { ok: true } },
      cause: 'compensator: tool returned',
      detail: {},
    })),
  );
  expect(recorded).toHaveLength(2);
  const finished = await finishRunsBatch(
    db,
    runIds.map((runId) => ({
      runId,
      to: RunStatus.COMPENSATED,
      reason: `every effect undone (${UNWIND_REQUESTED})`,
      seenReason: UNWIND_REQUESTED,
    })),
  );
  expect(finished).toHaveLength(2);
}

const GROUPED = [
  'comp_read_runs_steps',
  'comp_read_compensations',
  'comp_plan',
  'comp_claim_attempt_batch',
  'comp_record_attempt_outcome_batch',
  'comp_finish_runs_batch',
];

async function expectIndexOnlyPlans(prefix: string): Promise<void> {
  const { db, plans, close } = await explainGroupPool(env.databaseUrl, env.schema);
  try {
    for (let round = 0; round < 3; round++) await unwindThroughGroups(db, prefix, round);
  } finally {
    await close();
  }
  for (const name of GROUPED) expect(plans.get(name)?.length ?? 0, name).toBeGreaterThanOrEqual(3);
  for (const [name, list] of plans)
    for (const plan of list) expect(wholeReads(plan), `${name}: ${JSON.stringify(plan)}`).toEqual([]);
}

describe("the plans of the compensator's grouped statements (made once per connection)", () => {
  it('read by key only when made on an empty, never analysed log', async () => {
    await expectIndexOnlyPlans('empty');
  });

  it('read by key only when made on a log of many unwound runs', async () => {
    await sql`
      INSERT INTO runs (run_id, tenant_id, status, status_reason)
      SELECT 'old-' || g, 't', 'COMPENSATED', 'done' FROM generate_series(1, 20000) g`.execute(env.db);
    await sql`
      INSERT INTO saga_log (run_id, step_idx, tenant_id, tool, tool_class, tool_version, idempotency_key, args,
                            payload_hash, status, audience, compensation_status)
      SELECT 'old-' || g, 0, 't', 'noop', 'reversible', 1, md5(g::text), '{}', 'h', 'CONFIRMED', '{}', 'compensated'
        FROM generate_series(1, 20000) g`.execute(env.db);
    await sql`
      INSERT INTO compensations (run_id, step_idx, tenant_id, tool, args, idempotency_key, status, attempts)
      SELECT 'old-' || g, 0, 't', 'noop_undo', '{}', md5('c' || g), 'compensated', 1
        FROM generate_series(1, 20000) g`.execute(env.db);
    await sql`ANALYZE runs, saga_log, compensations, step_event_rows`.execute(env.db);
    await expectIndexOnlyPlans('loaded');
  });
});
