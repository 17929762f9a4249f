/**
 * The gauges that count the whole history read counters kept by triggers (migration 0008), not the log:
 * `saga_runs{status}` and `saga_irreversible_before_pivot_steps` from `run_status_counts`,
 * `saga_captures_without_reservation{tool}` from `capture_check_runs`. Each test checks the scrape against
 * the expected numbers and against the whole-log query the gauge used to run, under concurrent writers,
 * rolled-back transactions and refused transitions, and for rows written before the migration.
 */
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDb,
  createRun,
  InvalidRunTransitionError,
  markOutcomeDelivered,
  migrateToLatest,
  payloadHash,
  recordIntent,
  registerSagaLogGauges,
  RunStatus,
  SagaLogGaugeGroup,
  stepKey,
  StepStatus,
  transitionRun,
  transitionStep,
  type SagaDb,
  type StepStatus as StepStatusT,
} from '@agent-saga/core';
import { createTestEnv, migrateCoreTo, type TestEnv } from '@agent-saga/core/testing';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('gauge_counters');
});
afterAll(async () => env?.close());

const CAPTURE = 'capture_payment';
const RESERVATION = 'authorize_payment';

/** What the two groups export on a scrape: `saga_runs` by status, the irreversible sum, violations by tool. */
async function scrape(db: SagaDb) {
  const registry = new Registry();
  registerSagaLogGauges(registry, db, { groups: [SagaLogGaugeGroup.RUN_TOTALS, SagaLogGaugeGroup.CAPTURES] });
  const metrics = await registry.getMetricsAsJSON();
  const values = (name: string) => metrics.find((m) => m.name === name)?.values ?? [];
  const errors = values('saga_log_gauge_errors_total');
  if (errors.length) throw new Error(`a gauge read failed: ${JSON.stringify(errors)}`);
  return {
    runs: Object.fromEntries(values('saga_runs').map((v) => [String(v.labels.status), v.value])),
    irreversible: values('saga_irreversible_before_pivot_steps')[0]?.value,
    captures: Object.fromEntries(
      values('saga_captures_without_reservation').map((v) => [String(v.labels.tool), v.value]),
    ),
  };
}

/** The same figures read from the whole log, as the gauges did before migration 0008. */
async function fromWholeLog(db: SagaDb) {
  const runs = await sql<{ status: string; n: number; irreversible: number }>`
    SELECT status, count(*)::float8 AS n, coalesce(sum(irreversible_before_pivot), 0)::float8 AS irreversible
      FROM runs GROUP BY status`.execute(db);
  const captures = await sql<{ n: number }>`
    SELECT count(*)::float8 AS n FROM saga_log cap
     WHERE cap.tool = ${CAPTURE} AND cap.status = ${StepStatus.CONFIRMED}
       AND NOT EXISTS (SELECT 1 FROM saga_log res WHERE res.run_id = cap.run_id
                          AND res.tool = ${RESERVATION} AND res.status = ${StepStatus.CONFIRMED})`.execute(
    db,
  );
  return {
    runs: Object.fromEntries(
      Object.values(RunStatus).map((s) => [s, runs.rows.find((r) => r.status === s)?.n ?? 0]),
    ),
    irreversible: runs.rows.reduce((sum, r) => sum + r.irreversible, 0),
    captures: { [CAPTURE]: captures.rows[0]!.n },
  };
}

async function expectCountsMatchLog(db: SagaDb = env.db) {
  const s = await scrape(db);
  expect(s).toEqual(await fromWholeLog(db));
  return s;
}

/** A step of `tool` written INTENDED as the intake writes it. */
async function intendedPaymentStep(runId: string, stepIdx: number, tool: string) {
  const args = { orderId: runId, stepIdx };
  await env.db.transaction().execute((trx) =>
    recordIntent(trx, {
      runId,
      stepIdx,
      tenantId: 'acme',
      tool,
      toolClass: 'compensatable',
      toolVersion: 1,
      idempotencyKey: stepKey(runId, stepIdx, tool),
      args,
      payloadHash: payloadHash(tool, args),
      compensation: null,
      correction: null,
      audience: [],
      dependsOn: null,
      status: StepStatus.INTENDED,
      schema: env.schema,
    }),
  );
}

async function moveStep(runId: string, stepIdx: number, to: StepStatusT) {
  await env.db.transaction().execute((trx) =>
    transitionStep(trx, {
      runId,
      stepIdx,
      to,
      cause: 'test',
      patch: to === StepStatus.CONFIRMED ? { external_ref: `ref-${runId}-${stepIdx}` } : {},
      schema: env.schema,
    }),
  );
}

const moveRun = (runId: string, to: RunStatus) =>
  env.db.transaction().execute((trx) => transitionRun(trx, { runId, to, reason: 'test' }));

describe('saga_runs and saga_irreversible_before_pivot_steps', () => {
  it('count runs moving through statuses concurrently, without a refused or rolled-back move', async () => {
    const before = await expectCountsMatchLog();
    /** Four lives of a run, 15 runs each, all at once over the pool's connections. */
    const paths: readonly (readonly RunStatus[])[] = [
      [RunStatus.COMPLETED],
      [RunStatus.COMPENSATING, RunStatus.COMPENSATED],
      [RunStatus.AWAITING_APPROVAL, RunStatus.RUNNING, RunStatus.COMPLETED],
      [RunStatus.AWAITING_APPROVAL],
    ];
    const runs = Array.from({ length: 60 }, (_, i) => ({ runId: `life-${i}`, path: paths[i % 4]! }));
    await Promise.all(
      runs.map(async ({ runId, path }) => {
        await createRun(env.db, { runId, tenantId: 'acme', metadata: {} });
        for (const to of path) await moveRun(runId, to);
      }),
    );
    // A move refused by the state machine, and one whose transaction rolls back: neither counts.
    await expect(moveRun('life-0', RunStatus.COMPENSATING)).rejects.toBeInstanceOf(InvalidRunTransitionError);
    await expect(
      env.db.transaction().execute(async (trx) => {
        await transitionRun(trx, { runId: 'life-3', to: RunStatus.COMPENSATING, reason: 'test' });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // A second creation of an existing run is an idempotent repeat, not a new run.
    await createRun(env.db, { runId: 'life-0', tenantId: 'acme', metadata: {} });

    const after = await expectCountsMatchLog();
    const grew = (s: RunStatus) => after.runs[s]! - before.runs[s]!;
    expect(grew(RunStatus.COMPLETED)).toBe(30);
    expect(grew(RunStatus.COMPENSATED)).toBe(15);
    expect(grew(RunStatus.AWAITING_APPROVAL)).toBe(15);
    expect(grew(RunStatus.RUNNING)).toBe(0);
    expect(grew(RunStatus.COMPENSATING)).toBe(0);
  });

  it('sum the irreversible steps released before a pivot, concurrent releases included', async () => {
    const before = await expectCountsMatchLog();
    for (const runId of ['irr-0', 'irr-1', 'irr-2'])
      await createRun(env.db, { runId, tenantId: 'acme', metadata: {} });
    // The statement `releaseHeldStep` runs, 10 times at once on one run and once on each of two others.
    const release = (runId: string) =>
      sql`UPDATE runs SET irreversible_before_pivot = irreversible_before_pivot + 1 WHERE run_id = ${runId}`.execute(
        env.db,
      );
    await Promise.all([
      ...Array.from({ length: 10 }, () => release('irr-0')),
      release('irr-1'),
      release('irr-2'),
    ]);
    await expect(
      env.db.transaction().execute(async (trx) => {
        await sql`UPDATE runs SET irreversible_before_pivot = irreversible_before_pivot + 1 WHERE run_id = 'irr-1'`.execute(
          trx,
        );
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // A run that ends keeps its count in the sum (the gauge only grows).
    await moveRun('irr-0', RunStatus.COMPLETED);
    const after = await expectCountsMatchLog();
    expect(after.irreversible! - before.irreversible!).toBe(12);
  });
});

describe('saga_captures_without_reservation', () => {
  it('counts a capture with no confirmed authorisation once, and clears it when one is confirmed', async () => {
    const before = (await expectCountsMatchLog()).captures[CAPTURE]!;
    // Authorised, then captured: fine.
    await createRun(env.db, { runId: 'pay-ok', tenantId: 'acme', metadata: {} });
    await intendedPaymentStep('pay-ok', 0, RESERVATION);
    await intendedPaymentStep('pay-ok', 1, CAPTURE);
    await moveStep('pay-ok', 0, StepStatus.CONFIRMED);
    await moveStep('pay-ok', 1, StepStatus.CONFIRMED);
    // The authorisation FAILED, the capture went through: one incident.
    await createRun(env.db, { runId: 'pay-bad', tenantId: 'acme', metadata: {} });
    await intendedPaymentStep('pay-bad', 0, RESERVATION);
    await intendedPaymentStep('pay-bad', 1, CAPTURE);
    await moveStep('pay-bad', 0, StepStatus.FAILED);
    await moveStep('pay-bad', 1, StepStatus.CONFIRMED);
    // Captured while the authorisation's outcome is still UNKNOWN: an incident until the lookup finds it.
    await createRun(env.db, { runId: 'pay-late', tenantId: 'acme', metadata: {} });
    await intendedPaymentStep('pay-late', 0, RESERVATION);
    await intendedPaymentStep('pay-late', 1, CAPTURE);
    await moveStep('pay-late', 0, StepStatus.UNKNOWN);
    await moveStep('pay-late', 1, StepStatus.CONFIRMED);
    expect((await expectCountsMatchLog()).captures[CAPTURE]! - before).toBe(2);

    // Later writes to a counted step (its outcome delivered) and repeated scrapes do not count it again.
    await env.db.transaction().execute((trx) => markOutcomeDelivered(trx, 'pay-bad', 1));
    await sql`UPDATE saga_log SET status = status WHERE run_id = 'pay-bad'`.execute(env.db);
    expect((await expectCountsMatchLog()).captures[CAPTURE]! - before).toBe(2);
    expect((await expectCountsMatchLog()).captures[CAPTURE]! - before).toBe(2);

    await moveStep('pay-late', 0, StepStatus.CONFIRMED);
    expect((await expectCountsMatchLog()).captures[CAPTURE]! - before).toBe(1);
  });

  it('sees a capture and its authorisation confirmed at the same moment in two transactions', async () => {
    const runId = `pay-race-${env.schema}`;
    await createRun(env.db, { runId, tenantId: 'acme', metadata: {} });
    await intendedPaymentStep(runId, 0, RESERVATION);
    await intendedPaymentStep(runId, 1, CAPTURE);
    const before = (await expectCountsMatchLog()).captures[CAPTURE]!;

    // The capture's transaction confirms and stays open while the authorisation's confirms: neither
    // sees the other's step, and each would find the other missing in a read of the log.
    const confirm = (stepIdx: number) =>
      sql`UPDATE saga_log SET status = ${sql.lit(StepStatus.CONFIRMED)}
           WHERE run_id = ${sql.lit(runId)} AND step_idx = ${sql.lit(stepIdx)}`;
    let commitCapture!: () => void;
    const captureHeld = new Promise<void>((resolve) => (commitCapture = resolve));
    let captured!: () => void;
    const captureWritten = new Promise<void>((resolve) => (captured = resolve));
    const capture = env.db.transaction().execute(async (trx) => {
      await confirm(1).execute(trx);
      captured();
      await captureHeld;
    });
    await captureWritten;
    const reservation = env.db.transaction().execute(async (trx) => void (await confirm(0).execute(trx)));
    // The authorisation's statement is under way (it waits for the capture's count row) before the
    // capture commits.
    await expect
      .poll(
        async () =>
          (
            await sql<{ n: number }>`
              SELECT count(*)::int AS n FROM pg_stat_activity
               WHERE cardinality(pg_blocking_pids(pid)) > 0 AND query LIKE ${`%${runId}%step_idx = 0%`}`.execute(
              env.db,
            )
          ).rows[0]!.n,
        { timeout: 10_000 },
      )
      .toBe(1);
    commitCapture();
    await Promise.all([capture, reservation]);
    expect((await expectCountsMatchLog()).captures[CAPTURE]! - before).toBe(0);
  });

  it('is read only for tools that a capture check names, spelled in the triggers as in capture_checks', async () => {
    const checks = await sql<{ capture_tool: string; reservation_tool: string }>`
      SELECT capture_tool, reservation_tool FROM capture_checks`.execute(env.db);
    expect(checks.rows).toEqual([{ capture_tool: CAPTURE, reservation_tool: RESERVATION }]);
    const triggers = await sql<{ def: string }>`
      SELECT pg_get_triggerdef(t.oid) AS def FROM pg_trigger t
        JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ${env.schema} AND c.relname = 'saga_log' AND t.tgname LIKE 'saga_log_capture_check_%'
         AND NOT t.tgisinternal AND t.tgtype & 32 = 0`.execute(env.db); // 32: TRUNCATE (no WHEN)
    expect(triggers.rows).toHaveLength(3);
    for (const { def } of triggers.rows)
      for (const c of checks.rows) {
        expect(def).toContain(`'${c.capture_tool}'`);
        expect(def).toContain(`'${c.reservation_tool}'`);
      }
  });
});

describe('migration 0008', () => {
  it('counts the runs and payments that existed before it', async () => {
    const schema = `${env.schema}_old`;
    const db = createDb({ url: env.databaseUrl, schema, poolSize: 2 });
    try {
      await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(db);
      const to0007 = await migrateCoreTo(db, schema, '0007_unclaimed_intents');
      expect(to0007.error).toBeUndefined();
      await sql`
        INSERT INTO runs (run_id, tenant_id, status, irreversible_before_pivot) VALUES
          ('a', 't', 'COMPLETED', 2), ('b', 't', 'COMPLETED', 0), ('c', 't', 'RUNNING', 1),
          ('d', 't', 'MANUAL_INTERVENTION', 0)`.execute(db);
      const step = (runId: string, idx: number, tool: string, status: string) =>
        sql`INSERT INTO saga_log (run_id, step_idx, tenant_id, tool, tool_class, tool_version, idempotency_key,
                                  args, payload_hash, status)
            VALUES (${runId}, ${idx}, 't', ${tool}, 'compensatable', 1, ${`${runId}:${idx}`}, '{}', 'h', ${status})`.execute(
          db,
        );
      await step('a', 0, RESERVATION, 'CONFIRMED');
      await step('a', 1, CAPTURE, 'CONFIRMED');
      await step('b', 0, CAPTURE, 'CONFIRMED'); // no authorisation at all
      await step('d', 0, RESERVATION, 'FAILED');
      await step('d', 1, CAPTURE, 'CONFIRMED');
      await step('c', 0, CAPTURE, 'INTENDED'); // not settled: not counted

      await migrateToLatest(db, schema);
      const s = await scrape(db);
      expect(s).toEqual(await fromWholeLog(db));
      expect(s.runs).toMatchObject({ COMPLETED: 2, RUNNING: 1, MANUAL_INTERVENTION: 1 });
      expect(s.irreversible).toBe(3);
      expect(s.captures).toEqual({ [CAPTURE]: 2 });

      // And counts what is written after it, on top of the backfill.
      await sql`UPDATE runs SET status = 'COMPLETED' WHERE run_id = 'c'`.execute(db);
      await sql`UPDATE saga_log SET status = 'CONFIRMED' WHERE run_id = 'c'`.execute(db);
      const later = await scrape(db);
      expect(later).toEqual(await fromWholeLog(db));
      expect(later.runs).toMatchObject({ COMPLETED: 3, RUNNING: 0 });
      expect(later.captures).toEqual({ [CAPTURE]: 3 });
    } finally {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
      await db.destroy();
    }
  });
});
