/**
 * The unwind phase: how many one-step runs the compensator unwinds per second.
 *
 * While the dispatcher roles run, BENCH_UNWIND_RUNS fresh runs each get one `noop` call (CONFIRMED, with
 * its `noop_undo` compensation stored at intake) and then `POST /v1/runs/:id/unwind`, BENCH_CONCURRENCY at
 * a time; no compensator runs yet, so every run waits in COMPENSATING. After the roles have stopped, one
 * compensator process (services/compensator/dist/bin/compensator.js, started as in production, on the
 * compiled bench/noop-tools.ts, product settings except COMPENSATOR_CONCURRENCY = BENCH_UNWIND_CONCURRENCY)
 * starts and finds them with its sweep.
 * The rate is runs ÷ (last run's COMPENSATED − first run's COMPENSATED), from the `runs` rows; the wall
 * time from the process's start to the last run is reported beside it (it includes start-up and the
 * first sweep).
 */
import { sql } from 'kysely';
import { RunStatus, type SagaDb } from '@agent-saga/core';
import type { SagaClient } from '@agent-saga/client';
import type { BenchConfig } from './bench-config.js';
import { createRuns } from './bench-schema.js';
import { startRole, waitUntil } from './child-process.js';
import { benchRoleEnv, cpuProfileArgs } from './dispatcher-roles.js';

export interface UnwindResult {
  readonly runs: number;
  readonly concurrency: number;
  /** Runs COMPENSATED per second, first to last. */
  readonly runsPerSecond: number;
  /** From the compensator's spawn to the last run COMPENSATED. */
  readonly wallSeconds: number;
  readonly notCompensated: number;
  /** How the runs ended, by status (all COMPENSATED when the unwind worked). */
  readonly endStatuses: Readonly<Record<string, number>>;
  readonly shutdown: { readonly code: number | null; readonly killed: boolean };
}

const PREFIX = 'w';

/** Runs `op(i)` for i in [0, n) with `concurrency` in flight. */
async function pooled(n: number, concurrency: number, op: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await op(next++);
    }),
  );
}

/** One `noop` call in each of `n` fresh runs, then an unwind request for each (roles running). */
export async function prepareUnwind(
  db: SagaDb,
  client: SagaClient,
  config: BenchConfig,
): Promise<readonly string[]> {
  const runIds = await createRuns(db, PREFIX, config.BENCH_UNWIND_RUNS);
  await pooled(runIds.length, config.BENCH_CONCURRENCY, async (i) => {
    const out = await client.call(runIds[i]!, 'noop', { n: i }, { stepIdx: 0, waitMs: config.BENCH_WAIT_MS });
    if (out.status !== 'CONFIRMED') throw new Error(`unwind set-up: ${runIds[i]} answered ${out.status}`);
  });
  await pooled(runIds.length, config.BENCH_CONCURRENCY, async (i) => {
    await client.unwind(runIds[i]!, 'bench: unwind phase');
  });
  return runIds;
}

/** Starts a compensator on the bench schema and waits until every run of {@link prepareUnwind} has ended. */
export async function measureUnwind(
  db: SagaDb,
  config: BenchConfig,
  target: { readonly schema: string; readonly queuePrefix: string },
  runs: number,
): Promise<UnwindResult> {
  const t0 = performance.now();
  const compensator = startRole(
    'compensator',
    'compensator',
    {
      ...benchRoleEnv(config, target),
      COMPENSATOR_CONCURRENCY: String(config.BENCH_UNWIND_CONCURRENCY),
    },
    cpuProfileArgs(config, 'compensator'),
  );
  const open = async () =>
    Number(
      (
        await sql<{ n: string }>`SELECT count(*)::text AS n FROM runs
           WHERE run_id LIKE ${`${PREFIX}-%`} AND status = ${RunStatus.COMPENSATING}`.execute(db)
      ).rows[0]?.n ?? 0,
    );
  let wall = NaN;
  let shutdown: UnwindResult['shutdown'] = { code: null, killed: false };
  try {
    // Why 10 minutes: even at 10 runs/s the full phase's 2,000 runs end well within it.
    await waitUntil('the unwind of every run', async () => (await open()) === 0, 600_000, [compensator]);
    wall = (performance.now() - t0) / 1000;
  } finally {
    const stopped = await compensator.stop(15_000);
    shutdown = { code: stopped.code, killed: stopped.killed };
  }
  const r = await sql<{ done: string; other: string; span: number | null }>`
    SELECT count(*) FILTER (WHERE status = ${RunStatus.COMPENSATED})::text AS done,
           count(*) FILTER (WHERE status <> ${RunStatus.COMPENSATED})::text AS other,
           extract(epoch FROM max(updated_at) FILTER (WHERE status = ${RunStatus.COMPENSATED})
                             - min(updated_at) FILTER (WHERE status = ${RunStatus.COMPENSATED}))::float8 AS span
      FROM runs WHERE run_id LIKE ${`${PREFIX}-%`}`.execute(db);
  const row = r.rows[0]!;
  const statuses = await sql<{ status: string; n: string }>`
    SELECT status, count(*)::text AS n FROM runs WHERE run_id LIKE ${`${PREFIX}-%`} GROUP BY status`.execute(
    db,
  );
  const done = Number(row.done);
  return {
    runs,
    concurrency: config.BENCH_UNWIND_CONCURRENCY,
    runsPerSecond: row.span && row.span > 0 ? done / row.span : NaN,
    wallSeconds: wall,
    notCompensated: Number(row.other),
    endStatuses: Object.fromEntries(statuses.rows.map((x) => [x.status, Number(x.n)])),
    shutdown,
  };
}
