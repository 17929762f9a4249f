/**
 * The delivery group's statement (`markOutcomesDelivered`): a read that finds a step on its way writes
 * nothing, a read that finds it settled marks it delivered (which moves the run's computed cursor) in the
 * same commit, another tenant's step is neither read nor written, and no delivery writes or waits for the
 * run's row (its version is unchanged; a transaction holding the run's lock does not hold a mark back).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  createDb,
  createRun,
  lockRun,
  markOutcomeDelivered,
  payloadHash,
  readRunCursor,
  recordIntent,
  stepKey,
  StepStatus,
  type SagaDb,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { createDeliveryGroup, type DeliveryGroup } from '../src/api/delivery-group.js';

const TENANT = 'acme';
let env: TestEnv;
let group: DeliveryGroup;
/** A second pool: the concurrent delivery of the race holds one of its connections. */
let other: SagaDb;

beforeAll(async () => {
  env = await createTestEnv('delivgroup');
  group = createDeliveryGroup(env.db);
  other = createDb({ url: env.databaseUrl, schema: env.schema, poolSize: 2 });
});
afterAll(async () => {
  await other?.destroy();
  await env?.close();
});

/** A run with `statuses.length` steps, step i in `statuses[i]`. */
async function runWith(runId: string, statuses: readonly StepStatus[]): Promise<void> {
  await createRun(env.db, { runId, tenantId: TENANT, metadata: {} });
  for (const [stepIdx, status] of statuses.entries()) {
    const args = { n: stepIdx };
    await env.db.transaction().execute((trx) =>
      recordIntent(trx, {
        runId,
        stepIdx,
        tenantId: TENANT,
        tool: 'noop',
        toolClass: 'irreversible',
        toolVersion: 1,
        idempotencyKey: stepKey(runId, stepIdx, 'noop'),
        args,
        payloadHash: payloadHash('noop', args),
        compensation: null,
        correction: null,
        audience: [],
        dependsOn: null,
        approvalId: null,
        status: StepStatus.INTENDED,
        schema: env.schema,
        notifyRelay: false,
        relayGraceMs: 0,
      }),
    );
    if (status !== StepStatus.INTENDED)
      await sql`UPDATE saga_log SET status = ${status} WHERE run_id = ${runId} AND step_idx = ${stepIdx}`.execute(
        env.db,
      );
  }
}

/** The run's cursor, its row's version (xmin: any write of the run changes it) and each step's mark. */
async function state(runId: string) {
  const run = await sql<{ version: string }>`
    SELECT xmin::text AS version FROM runs WHERE run_id = ${runId}`.execute(env.db);
  const steps = await sql<{ outcome_delivered: boolean }>`
    SELECT outcome_delivered FROM saga_log WHERE run_id = ${runId} ORDER BY step_idx`.execute(env.db);
  return {
    cursor: await readRunCursor(env.db, runId),
    ...run.rows[0]!,
    delivered: steps.rows.map((s) => s.outcome_delivered),
  };
}

describe('the delivery group reads each step and delivers the settled ones in one statement', () => {
  it('a step still on its way is read and nothing is written', async () => {
    await runWith('dg-intended', [StepStatus.INTENDED]);
    const before = await state('dg-intended');
    const row = await group.submit({ tenantId: TENANT, runId: 'dg-intended', stepIdx: 0 });
    expect(row).toMatchObject({ status: StepStatus.INTENDED, outcome_delivered: false });
    expect(await state('dg-intended')).toEqual(before);
  });

  it('a settled step is marked delivered and the cursor moves past it, and its row says so', async () => {
    await runWith('dg-settled', [StepStatus.CONFIRMED, StepStatus.INTENDED]);
    const row = await group.submit({ tenantId: TENANT, runId: 'dg-settled', stepIdx: 0 });
    expect(row).toMatchObject({ status: StepStatus.CONFIRMED, outcome_delivered: true, step_idx: 0 });
    expect(await state('dg-settled')).toMatchObject({ cursor: 1, delivered: [true, false] });
    // Delivered already: read again, nothing more written.
    const before = await state('dg-settled');
    expect(await group.submit({ tenantId: TENANT, runId: 'dg-settled', stepIdx: 0 })).toMatchObject({
      outcome_delivered: true,
    });
    expect(await state('dg-settled')).toEqual(before);
  });

  it('two answers of the same step in one group both carry it; it is marked once', async () => {
    await runWith('dg-twice', [StepStatus.CONFIRMED, StepStatus.CONFIRMED]);
    const item = { tenantId: TENANT, runId: 'dg-twice', stepIdx: 1 };
    const rows = await Promise.all([group.submit(item), group.submit(item)]);
    for (const row of rows) expect(row).toMatchObject({ step_idx: 1, outcome_delivered: true });
    // Step 0 is still owed to its caller: the cursor stays at 0.
    expect(await state('dg-twice')).toMatchObject({ cursor: 0, delivered: [false, true] });
  });

  it("another tenant's step is not read and not delivered; a missing step is undefined", async () => {
    await runWith('dg-tenant', [StepStatus.CONFIRMED]);
    const before = await state('dg-tenant');
    const [foreign, missing] = await Promise.all([
      group.submit({ tenantId: 'other', runId: 'dg-tenant', stepIdx: 0 }),
      group.submit({ tenantId: TENANT, runId: 'dg-tenant', stepIdx: 5 }),
    ]);
    expect(foreign).toBeUndefined();
    expect(missing).toBeUndefined();
    expect(await state('dg-tenant')).toEqual(before);
  });

  it('a delivery neither writes nor waits for the run; the cursor counts every committed mark', async () => {
    // Steps 0 and 1 settled. Another transaction holds the run's lock (as an intake does) and has marked
    // step 1, not yet committed. The group's mark of step 0 does not wait for it; the cursor then stops at 1
    // (step 1's mark is not committed) and reaches 2 once it is. The run's row is never written.
    await runWith('dg-race', [StepStatus.CONFIRMED, StepStatus.CONFIRMED]);
    const before = await state('dg-race');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    const concurrent = other.transaction().execute(async (trx) => {
      await lockRun(trx, TENANT, 'dg-race');
      await markOutcomeDelivered(trx, 'dg-race', 1);
      locked();
      await held;
    });
    await lockTaken;
    const row = await group.submit({ tenantId: TENANT, runId: 'dg-race', stepIdx: 0 });
    expect(row).toMatchObject({ status: StepStatus.CONFIRMED, outcome_delivered: true, step_idx: 0 });
    expect(await state('dg-race')).toEqual({ cursor: 1, version: before.version, delivered: [true, false] });
    release();
    await concurrent;
    expect(await state('dg-race')).toEqual({ cursor: 2, version: before.version, delivered: [true, true] });
  });
});
