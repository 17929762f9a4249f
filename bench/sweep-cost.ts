/**
 * The sweep-cost phase: does every periodic query cost the same with a small and a large saga log?
 *
 * Settled steps (CONFIRMED, in COMPLETED runs) are bulk-loaded with `generate_series`, copied column by
 * column from a real CONFIRMED row of the sustained phase (so every column, present or added by a later
 * migration, holds what the product writes), plus {@link STUCK_STEPS} UNKNOWN steps for the sweeps to find.
 * At each size, after VACUUM (ANALYZE) of the log's tables, each periodic query runs BENCH_SCALE_REPEATS times and its median is kept:
 * the reconciler's claim (in a transaction that is rolled back, so every repetition claims the same
 * rows), its scans, core's republish of unclaimed intents, and each saga-log gauge group as a scrape reads
 * it (core's own collector on a registry of its own, timed by its `saga_log_gauge_read_duration_seconds`).
 * The functions are the services' and core's own, imported read-only.
 */
import { Registry } from 'prom-client';
import { sql } from 'kysely';
import {
  registerSagaLogGauges,
  republishUnclaimedIntents,
  SagaLogGaugeGroup,
  valuesOf,
  type SagaDb,
} from '@agent-saga/core';
import {
  claimReconcilableSteps,
  findStaleOutbox,
  findStuckRuns,
  findUnknownSteps,
} from '@agent-saga/reconciler';

/** Why 5: "a sweep of a few stuck ones" (the issue); the claim returns them every repetition. */
const STUCK_STEPS = 5;
/** Steps per loaded run, as in the sustained phase. */
const STEPS_PER_RUN = 20;

/** The median time of one query at one size, and the ratio large/small. */
export interface SweepCostRow {
  readonly query: string;
  readonly smallMs: number;
  readonly largeMs: number;
  /** largeMs / smallMs: the target is 0.8 – 1.2. */
  readonly ratio: number;
}

export interface SweepCost {
  readonly smallRows: number;
  readonly largeRows: number;
  readonly loadSeconds: number;
  readonly rows: readonly SweepCostRow[];
}

type Timed = Readonly<Record<string, () => Promise<unknown>>>;

class Rollback extends Error {}

function periodicQueries(db: SagaDb, schema: string): Timed {
  const queries: Record<string, () => Promise<unknown>> = {
    'reconciler: claim reconcilable steps (5 stuck, limit 100)': () =>
      db
        .transaction()
        .execute(async (trx) => {
          const got = await claimReconcilableSteps(trx, { owner: 'bench', leaseMs: 30_000, limit: 100 });
          if (got.length < STUCK_STEPS)
            throw new Error(`the claim found ${got.length} of ${STUCK_STEPS} stuck steps`);
          throw new Rollback();
        })
        .catch((e: unknown) => {
          if (!(e instanceof Rollback)) throw e;
        }),
    'reconciler: find stuck runs': () => findStuckRuns(db, 3_600_000),
    'reconciler: find stale outbox': () => findStaleOutbox(db, 60_000),
    'reconciler: find unknown steps': () => findUnknownSteps(db),
    'core: republish unclaimed intents (none due)': () =>
      republishUnclaimedIntents(db, { olderThanMs: 20_000, schema }),
  };
  for (const group of valuesOf(SagaLogGaugeGroup)) {
    const registry = new Registry();
    registerSagaLogGauges(registry, db, { groups: [group], cacheMs: 0 });
    queries[`gauge read: ${group}`] = async () => {
      await registry.metrics();
      const g = (await registry.getSingleMetric('saga_log_gauge_read_duration_seconds')?.get())?.values.find(
        (v) => v.labels.group === group,
      );
      if (!g) throw new Error(`no read duration for gauge group ${group}`);
      return g.value * 1000;
    };
  }
  return queries;
}

/**
 * Median ms of each query; a gauge group reports its own read duration (the scrape's other work excluded).
 * Every query runs in each round (rounds, not one query's repetitions back to back), after three warm-up
 * rounds: sub-millisecond timings drift with what the machine did just before (a backend woken from idle,
 * the bulk load that precedes the large size), and rounds spread that drift over every query alike.
 */
async function timeAll(queries: Timed, repeats: number): Promise<Record<string, number>> {
  const entries = Object.entries(queries);
  const samples = new Map<string, number[]>(entries.map(([name]) => [name, []]));
  // Why 3: one round warmed plans and buffers but the first timed rounds still read slower.
  for (let w = 0; w < 3; w++) for (const [, q] of entries) await q();
  for (let i = 0; i < repeats; i++)
    for (const [name, q] of entries) {
      const t0 = performance.now();
      const reported = await q();
      const wall = performance.now() - t0;
      samples
        .get(name)!
        .push(name.startsWith('gauge read:') && typeof reported === 'number' ? reported : wall);
    }
  const out: Record<string, number> = {};
  for (const [name, s] of samples) {
    s.sort((a, b) => a - b);
    out[name] = s[Math.floor(s.length / 2)]!;
  }
  return out;
}

/** The SELECT list that copies `template` (alias t) with some columns replaced. */
async function copyList(
  db: SagaDb,
  schema: string,
  table: string,
  replace: Record<string, string>,
): Promise<string> {
  const cols = await sql<{ column_name: string }>`
    SELECT column_name FROM information_schema.columns
     WHERE table_schema = ${schema} AND table_name = ${table} ORDER BY ordinal_position`.execute(db);
  return cols.rows.map((c) => replace[c.column_name] ?? `t."${c.column_name}"`).join(', ');
}

/** Adds settled steps numbered [from, to) in runs `scale-<n>`, copied from a CONFIRMED template row. */
async function loadSettled(db: SagaDb, schema: string, from: number, to: number): Promise<void> {
  const runCols = await copyList(db, schema, 'runs', {
    run_id: `'scale-' || g`,
    status: `'COMPLETED'`,
    created_at: `now() - interval '2 hours'`,
    updated_at: `now() - interval '2 hours'`,
  });
  const stepCols = await copyList(db, schema, 'saga_log', {
    run_id: `'scale-' || (g / ${STEPS_PER_RUN})`,
    step_idx: `g % ${STEPS_PER_RUN}`,
    idempotency_key: `'scale-key-' || g`,
    created_at: `now() - interval '2 hours'`,
    updated_at: `now() - interval '2 hours'`,
  });
  const firstRun = Math.floor(from / STEPS_PER_RUN);
  const lastRun = Math.ceil(to / STEPS_PER_RUN);
  await sql`
    INSERT INTO runs SELECT ${sql.raw(runCols)}
      FROM (SELECT * FROM runs WHERE run_id = (SELECT run_id FROM saga_log WHERE status = 'CONFIRMED' LIMIT 1)) t,
           generate_series(${firstRun}::int, ${lastRun - 1}::int) g
    ON CONFLICT DO NOTHING`.execute(db);
  await sql`
    INSERT INTO saga_log SELECT ${sql.raw(stepCols)}
      FROM (SELECT * FROM saga_log WHERE status = 'CONFIRMED' LIMIT 1) t,
           generate_series(${from}::int, ${to - 1}::int) g`.execute(db);
}

/** The stuck steps every sweep must find: UNKNOWN, never reconciled, in an open run. */
async function addStuck(db: SagaDb, schema: string): Promise<void> {
  const runCols = await copyList(db, schema, 'runs', { run_id: `'stuck-run'`, status: `'RUNNING'` });
  await sql`INSERT INTO runs SELECT ${sql.raw(runCols)}
      FROM (SELECT * FROM runs WHERE run_id = (SELECT run_id FROM saga_log WHERE status = 'CONFIRMED' LIMIT 1)) t`.execute(
    db,
  );
  const stepCols = await copyList(db, schema, 'saga_log', {
    run_id: `'stuck-run'`,
    step_idx: 'g',
    idempotency_key: `'stuck-key-' || g`,
    status: `'UNKNOWN'`,
    lease_until: 'NULL',
    lease_owner: 'NULL',
    next_reconcile_at: 'NULL',
    reconcile_lease_until: 'NULL',
    reconcile_lease_owner: 'NULL',
  });
  await sql`INSERT INTO saga_log SELECT ${sql.raw(stepCols)}
      FROM (SELECT * FROM saga_log WHERE status = 'CONFIRMED' LIMIT 1) t, generate_series(0, ${STUCK_STEPS - 1}) g`.execute(
    db,
  );
}

/**
 * Puts the log's tables in the same state before each size is timed: vacuumed (no dead row versions left by
 * the sustained phase or the load, no autovacuum still due to run on them while the queries are timed) and
 * analyzed. Why: with ANALYZE alone the small size was timed right after the sustained phase had churned
 * `outbox`, `saga_log` and `runs`, while autovacuum worked on them, and every query read slower at 10⁴ than
 * at 10⁶ (ratios 0.42 – 0.87), which says nothing about growth with the log.
 */
async function settleTables(db: SagaDb): Promise<void> {
  await sql`VACUUM (ANALYZE) runs, saga_log, step_events, outbox, compensations`.execute(db);
}

export async function measureSweepCost(
  db: SagaDb,
  schema: string,
  sizes: { small: number; large: number; repeats: number },
  say: (line: string) => void,
): Promise<SweepCost> {
  const queries = periodicQueries(db, schema);
  await addStuck(db, schema);
  const t0 = performance.now();
  await loadSettled(db, schema, 0, sizes.small);
  let loadSeconds = (performance.now() - t0) / 1000;
  await settleTables(db);
  say(`sweep cost at ${sizes.small.toLocaleString('en-US')} settled steps`);
  const small = await timeAll(queries, sizes.repeats);
  const t1 = performance.now();
  // In slices, so no single statement holds a huge transaction on the shared server.
  const SLICE = 200_000;
  for (let i = sizes.small; i < sizes.large; i += SLICE)
    await loadSettled(db, schema, i, Math.min(sizes.large, i + SLICE));
  loadSeconds += (performance.now() - t1) / 1000;
  await settleTables(db);
  say(`sweep cost at ${sizes.large.toLocaleString('en-US')} settled steps`);
  const large = await timeAll(queries, sizes.repeats);
  return {
    smallRows: sizes.small,
    largeRows: sizes.large,
    loadSeconds,
    rows: Object.keys(queries).map((q) => ({
      query: q,
      smallMs: small[q]!,
      largeMs: large[q]!,
      ratio: large[q]! / small[q]!,
    })),
  };
}
