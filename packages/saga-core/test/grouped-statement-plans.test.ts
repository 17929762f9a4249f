import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  claimStepBatch,
  createRun,
  markOutcomesDelivered,
  payloadHash,
  recordNewIntents,
  recordOutcomeBatch,
  StepStatus,
  stepKey,
  type NewIntent,
  type SagaDb,
} from '@agent-saga/core';
import { createTestEnv, explainGroupPool, wholeReads, type TestEnv } from '@agent-saga/core/testing';
import { newIntent } from './intended-step.js';

/**
 * The grouped statements run on a pool whose plans are cached generic plans (`GROUPED_STATEMENT_SETTINGS`):
 * a plan made once, while a table may be empty or never analysed, and used while it grows. This reads the
 * plan of every grouped statement (and of the queries inside the functions they call), as Postgres runs
 * them on such a pool (auto_explain, sent to this client), made on an empty schema and made on a schema
 * holding many settled steps, and fails on any sequential scan or any index scan without a key condition:
 * either would read a whole table or index per call once the log is large.
 */
let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('plans');
});
afterAll(async () => env?.close());

function intent(runId: string, stepIdx: number, claim: boolean, tool = 'create_ticket'): NewIntent {
  // Not repeatable: the duplicate check (saga_repeated_operations) runs and its query is explained too.
  const args = { orderId: `${runId}-${stepIdx}` };
  const step = newIntent(runId, stepIdx, {
    args,
    ...(claim ? { claim: { owner: 'w-api', leaseMs: 30_000, cause: 'api: claimed at intake' } } : {}),
  });
  return {
    ...step,
    tool,
    idempotencyKey: stepKey(runId, stepIdx, tool),
    payloadHash: payloadHash(tool, args),
    operation: { ...step.operation!, tool },
  };
}

/**
 * Run `a` of each round takes a payment (an authorization inline, its capture through the executor's path):
 * a confirmed payment step fires the capture-check trigger (migrations 0008, 0025), whose statement runs
 * on this pool's settings too.
 */
const PAYMENT_TOOLS = ['authorize_payment', 'capture_payment'] as const;

const confirmed = { status: StepStatus.CONFIRMED, effect: { externalRef: 'T-1', result: { ok: true } } };

/** Each grouped statement, several times (a generic plan is used from the first execution on). */
async function runEveryGroupedStatement(db: SagaDb, prefix: string): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const runs = [`${prefix}-${round}-a`, `${prefix}-${round}-b`];
    for (const r of runs) await createRun(env.db, { runId: r, tenantId: 'acme', metadata: {} });
    // The inline path: written claimed, settled and delivered in the outcome's statement.
    const inline = runs.map((r, i) => intent(r, 0, true, i === 0 ? PAYMENT_TOOLS[0] : undefined));
    expect((await recordNewIntents(db, inline, 2_000)).every((row) => row !== null)).toBe(true);
    const settled = await recordOutcomeBatch(
      db,
      'w-api',
      inline.map((i) => ({ runId: i.runId, stepIdx: i.stepIdx, outcome: confirmed, deliver: true })),
      env.schema,
    );
    expect(settled).toHaveLength(2);
    // The executor's path: written unclaimed, claimed, settled, then marked delivered by the API.
    const queued = runs.map((r, i) => intent(r, 1, false, i === 0 ? PAYMENT_TOOLS[1] : undefined));
    expect((await recordNewIntents(db, queued, 2_000)).every((row) => row !== null)).toBe(true);
    const claimed = await claimStepBatch(
      db,
      queued.map((i) => ({
        runId: i.runId,
        stepIdx: i.stepIdx,
        key: i.idempotencyKey,
        jobId: `j-${i.runId}`,
      })),
      { worker: 'w-exec', leaseMsByTool: new Map(), defaultLeaseMs: 30_000 },
    );
    expect(claimed).toHaveLength(2);
    await recordOutcomeBatch(
      db,
      'w-exec',
      queued.map((i) => ({ runId: i.runId, stepIdx: i.stepIdx, outcome: confirmed })),
      env.schema,
    );
    const marked = await markOutcomesDelivered(
      db,
      queued.map((i) => ({ tenantId: 'acme', runId: i.runId, stepIdx: i.stepIdx })),
    );
    expect(marked.every((row) => row?.outcome_delivered === true)).toBe(true);
  }
}

const GROUPED = [
  'saga_record_new_intents',
  'saga_record_outcome_batch',
  'saga_claim_batch',
  'saga_mark_outcomes_delivered',
];

async function expectIndexOnlyPlans(prefix: string): Promise<void> {
  const { db, plans, close } = await explainGroupPool(env.databaseUrl, env.schema);
  try {
    await runEveryGroupedStatement(db, prefix);
  } finally {
    await close();
  }
  for (const name of GROUPED) expect(plans.get(name)?.length ?? 0, name).toBeGreaterThanOrEqual(3);
  // The duplicate check's own query, run inside saga_repeated_operations once per intake, and the
  // capture-check trigger's upsert, run for each confirmed payment step.
  expect(plans.get('nested:saga_log')?.length ?? 0).toBeGreaterThan(0);
  expect(plans.get('nested:capture_check_runs')?.length ?? 0).toBeGreaterThanOrEqual(6);
  for (const [name, list] of plans)
    for (const plan of list) expect(wholeReads(plan), `${name}: ${JSON.stringify(plan)}`).toEqual([]);
}

describe('the plans of the grouped statements (made once per connection)', () => {
  it('read by key only when made on an empty, never analysed log', async () => {
    await expectIndexOnlyPlans('empty');
  });

  it('read by key only when made on a log of many settled steps', async () => {
    await sql`
      INSERT INTO runs (run_id, tenant_id, status)
      SELECT 'old-' || g, 'acme', 'COMPLETED' FROM generate_series(1, 10000) g`.execute(env.db);
    await sql`
      INSERT INTO saga_log (run_id, step_idx, tenant_id, tool, tool_class, tool_version, idempotency_key, args,
                            payload_hash, status, audience, attempts, outcome_delivered)
      SELECT 'old-' || (g / 20 + 1), g % 20, 'acme', 'create_ticket', 'compensatable', 1, md5(g::text),
             jsonb_build_object('orderId', g), decode(md5(g::text), 'hex'), 'CONFIRMED', '{}', 1, true
        FROM generate_series(0, 199999) g`.execute(env.db);
    await sql`ANALYZE runs, saga_log, step_event_rows, outbox`.execute(env.db);
    await expectIndexOnlyPlans('loaded');
  });
});
