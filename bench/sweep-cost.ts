/**
 * The sweep-cost phase: does every periodic query cost the same with a small and a large saga log?
 *
 * Both sizes are held at once, each in a fresh schema of its own (`<bench>_small` and `<bench>_large`,
 * migrated as the bench schema is, dropped at the end, also on error), and timed interleaved. Why: the
 * queries take a fraction of a millisecond, and a shared machine drifts by more than the target's ±20 %
 * within a minute. Timing one size and then the other (the method until 2026-12-04, one schema grown from
 * the small size to the large one between the two timings) read that drift as growth: in one full run every
 * query, a one-counter gauge read included, came out 31 – 47 % slower at 10⁶ only because the machine had
 * slowed meanwhile. Interleaved, each query's two timings are taken next to each other, so the drift falls
 * on both sizes alike and cancels in the ratio.
 *
 * Each schema holds exactly: settled steps (CONFIRMED, in COMPLETED runs, {@link STEPS_PER_RUN} a run)
 * bulk-loaded with `generate_series`, copied column by column from one real CONFIRMED row of the sustained
 * phase and its run, read from the bench schema (so every column, present or added by a later migration,
 * holds what the product writes), plus {@link STUCK_STEPS} UNKNOWN steps for the sweeps to find. Nothing of
 * the sustained phase's own rows (steps, outbox rows, events) is in either, so both start from the same empty
 * tables. Both are vacuumed and analyzed, then one CHECKPOINT; then every query runs on both sizes in each
 * round, after warm-up rounds, BENCH_SCALE_REPEATS rounds, and its median at each size is kept:
 * the reconciler's claim (in a transaction that is rolled back, so every repetition claims the same
 * rows), its scans, core's republish of unclaimed intents, and each saga-log gauge group as a scrape reads
 * it (core's own collector on a registry of its own, timed by its `saga_log_gauge_read_duration_seconds`).
 * The functions are the services' and core's own, imported read-only, each size through a pool of its own.
 */
import { Registry } from 'prom-client';
import { sql, type RawBuilder } from 'kysely';
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
import { createMigratedSchema, type MigratedSchema } from './bench-schema.js';
import { summarize } from './latency-summary.js';

/** Why 5: "a sweep of a few stuck ones" (the issue); the claim returns them every repetition. */
const STUCK_STEPS = 5;
/** Steps per loaded run, as in the sustained phase. */
const STEPS_PER_RUN = 20;

/** The median time of one query at one size, and the ratio large/small. */
export interface SweepCostRow {
  readonly query: string;
  readonly smallMs: number;
  readonly largeMs: number;
  /** The median of the rounds' large/small ratios (each round times both sizes together): target 0.8 – 1.2. */
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
          const got = await claimReconcilableSteps(trx, {
            owner: 'bench',
            leaseMs: 30_000,
            limit: 100,
            schema,
          });
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

/** Why 3: one round warmed plans and buffers but the first timed rounds still read slower. */
const WARMUP_ROUNDS = 3;

/** One timing of `q`: its wall time, or for a gauge group the read duration it reports itself. */
async function timeOnce(name: string, q: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  const reported = await q();
  const wall = performance.now() - t0;
  return name.startsWith('gauge read:') && typeof reported === 'number' ? reported : wall;
}

/** The timings of each query at each size, one per round, in round order (`[size][query][round]`). */
type Samples = Record<string, number[]>[];

/**
 * Times each query at each size (`sets`: the same queries, one set per size), interleaved: in each round
 * every query runs on every size, its timings next to each other, and the order of the sizes alternates from
 * round to round (ABBA), so neither size always runs first (on a backend just woken, or with the other
 * size's buffers just read); the number of rounds is made even, so each size goes first equally often. Why
 * interleaved: the machine drifts, and drift between two timings taken apart reads as a ratio; taken
 * together, both sizes share it. Every query runs in each round (rounds, not one query's repetitions back
 * to back), after {@link WARMUP_ROUNDS} warm-up rounds on every size. A gauge group reports its own read
 * duration (the scrape's other work excluded).
 */
async function timeInterleaved(sets: readonly Timed[], repeats: number): Promise<Samples> {
  const names = Object.keys(sets[0] ?? {});
  const sizes = sets.map((queries) => ({
    queries,
    samples: Object.fromEntries(names.map((n) => [n, [] as number[]])),
  }));
  for (let w = 0; w < WARMUP_ROUNDS; w++)
    for (const name of names) for (const { queries } of sizes) await queries[name]!();
  const rounds = repeats + (repeats % 2);
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? sizes : [...sizes].reverse();
    for (const name of names)
      for (const { queries, samples } of order) samples[name]!.push(await timeOnce(name, queries[name]!));
  }
  return sizes.map(({ samples }) => samples);
}

/** The median as every phase of the bench gives it (latency-summary.ts: nearest rank, an observed value). */
const median = (values: readonly number[]): number => summarize(values).p50;

/** The SELECT list that copies the template (alias t) into `schema`.`table`, with some columns replaced. */
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

/** The real CONFIRMED step (and its run) every loaded row is copied from, in the bench schema. */
interface Template {
  readonly schema: string;
  readonly runId: string;
  readonly stepIdx: number;
}

/** One CONFIRMED step of the sustained phase, the same for both sizes (the first by key, not any). */
async function findTemplate(db: SagaDb, schema: string): Promise<Template> {
  const found = await sql<{ run_id: string; step_idx: number }>`
    SELECT run_id, step_idx FROM ${sql.id(schema, 'saga_log')}
     WHERE status = 'CONFIRMED' ORDER BY run_id, step_idx LIMIT 1`.execute(db);
  const row = found.rows[0];
  if (!row) throw new Error(`no CONFIRMED step in ${schema} to copy the settled steps from`);
  return { schema, runId: row.run_id, stepIdx: row.step_idx };
}

/** The template's run (alias t), read from the bench schema. */
const templateRun = (from: Template): RawBuilder<unknown> =>
  sql`(SELECT * FROM ${sql.id(from.schema, 'runs')} WHERE run_id = ${from.runId}) t`;
/** The template's step (alias t), read from the bench schema. */
const templateStep = (from: Template): RawBuilder<unknown> =>
  sql`(SELECT * FROM ${sql.id(from.schema, 'saga_log')}
        WHERE run_id = ${from.runId} AND step_idx = ${from.stepIdx}) t`;

/** Adds settled steps numbered [from, to) in runs `scale-<n>` to `into`, copied from the template. */
async function loadSettled(
  into: MigratedSchema,
  template: Template,
  from: number,
  to: number,
): Promise<void> {
  const { db, schema } = into;
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
    INSERT INTO ${sql.id(schema, 'runs')} SELECT ${sql.raw(runCols)}
      FROM ${templateRun(template)}, generate_series(${firstRun}::int, ${lastRun - 1}::int) g
    ON CONFLICT DO NOTHING`.execute(db);
  await sql`
    INSERT INTO ${sql.id(schema, 'saga_log')} SELECT ${sql.raw(stepCols)}
      FROM ${templateStep(template)}, generate_series(${from}::int, ${to - 1}::int) g`.execute(db);
}

/** The stuck steps every sweep must find in `into`: UNKNOWN, never reconciled, in an open run. */
async function addStuck(into: MigratedSchema, template: Template): Promise<void> {
  const { db, schema } = into;
  const runCols = await copyList(db, schema, 'runs', { run_id: `'stuck-run'`, status: `'RUNNING'` });
  await sql`INSERT INTO ${sql.id(schema, 'runs')} SELECT ${sql.raw(runCols)} FROM ${templateRun(template)}`.execute(
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
  await sql`INSERT INTO ${sql.id(schema, 'saga_log')} SELECT ${sql.raw(stepCols)}
      FROM ${templateStep(template)}, generate_series(0, ${STUCK_STEPS - 1}) g`.execute(db);
}

/** In slices, so no single statement holds a huge transaction on the shared server. */
const SLICE = 200_000;

/** Fills `into` with `rows` settled steps and the stuck ones, all copied from the template. */
async function loadLog(into: MigratedSchema, template: Template, rows: number): Promise<void> {
  await addStuck(into, template);
  for (let i = 0; i < rows; i += SLICE) await loadSettled(into, template, i, Math.min(rows, i + SLICE));
}

/**
 * Puts a freshly loaded schema's tables in a settled state before the timing: vacuumed and analyzed. Why
 * VACUUM and not ANALYZE alone: the loaded rows are not yet all-visible and carry no hint bits, so the
 * first reads would set them (writing pages) and index-only scans would visit the heap, and autovacuum
 * would come to the new tables while the queries are timed. Both sizes are settled the same way.
 */
async function settleTables(db: SagaDb): Promise<void> {
  await sql`VACUUM (ANALYZE) runs, saga_log, step_event_rows, outbox, compensations`.execute(db);
}

/**
 * One CHECKPOINT after both loads, so a checkpoint the loads' WAL would trigger does not write during the
 * timing. It needs superuser (or pg_checkpoint); without it, the timing goes on, said in the output.
 */
async function checkpoint(db: SagaDb, say: (line: string) => void): Promise<void> {
  try {
    await sql`CHECKPOINT`.execute(db);
  } catch (err) {
    say(
      `sweep cost: CHECKPOINT failed (${err instanceof Error ? err.message : String(err)}); timing without it`,
    );
  }
}

/**
 * Loads the small and the large log into two fresh schemas named after the bench schema, times every
 * periodic query on both interleaved, and drops both schemas (also on error). `bench` is the bench schema
 * (the template's source) and the database URL the two new pools connect to.
 */
export async function measureSweepCost(
  bench: { readonly db: SagaDb; readonly schema: string; readonly url: string },
  sizes: { small: number; large: number; repeats: number },
  say: (line: string) => void,
): Promise<SweepCost> {
  const made: MigratedSchema[] = [];
  try {
    const template = await findTemplate(bench.db, bench.schema);
    for (const size of ['small', 'large'] as const)
      made.push(
        await createMigratedSchema(bench.url, `${bench.schema}_${size}`, {
          poolSize: 2,
          applicationName: `agent-saga-bench-sweep-${size}`,
        }),
      );
    const [small, large] = made as [MigratedSchema, MigratedSchema];
    const t0 = performance.now();
    await loadLog(small, template, sizes.small);
    await loadLog(large, template, sizes.large);
    const loadSeconds = (performance.now() - t0) / 1000;
    await settleTables(small.db);
    await settleTables(large.db);
    await checkpoint(bench.db, say);
    say(
      `sweep cost at ${sizes.small.toLocaleString('en-US')} and ${sizes.large.toLocaleString('en-US')} settled steps, interleaved`,
    );
    const queries = periodicQueries(small.db, small.schema);
    const [smallMs, largeMs] = (await timeInterleaved(
      [queries, periodicQueries(large.db, large.schema)],
      sizes.repeats,
    )) as [Samples[number], Samples[number]];
    return {
      smallRows: sizes.small,
      largeRows: sizes.large,
      loadSeconds,
      rows: Object.keys(queries).map((q) => ({
        query: q,
        smallMs: median(smallMs[q]!),
        largeMs: median(largeMs[q]!),
        // The ratio of each round's pair, then their median: the pairs share the round's drift, which the
        // ratio of the two medians would not (measured on 40 rounds: 0.90–1.08 this way, 0.91–1.23 that).
        ratio: median(smallMs[q]!.map((small, i) => largeMs[q]![i]! / small)),
      })),
    };
  } finally {
    for (const s of made)
      await s.drop().catch((err: unknown) => console.error(`sweep cost: dropping ${s.schema} failed:`, err));
  }
}
