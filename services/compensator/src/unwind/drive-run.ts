import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import {
  CompensationStatus,
  InvalidRunTransitionError,
  InvalidTransitionError,
  listSteps,
  RunStatus,
  StepStatus,
  unwindReasonOf,
  type CompensationRow,
} from '@agent-saga/core';
import { planCompensations } from '../sql/plan-compensations.js';
import { transitionCompensation } from '../sql/transition-compensation.js';
import { planUnwind } from './compensation-order.js';
import { finishRun } from './finish-run.js';
import { reconcileStep } from './reconcile-step.js';
import { runCompensation } from './run-compensation.js';
import type { UnwindDeps } from './unwind-deps.js';

/** How a slice of an unwind ended: the run is terminal (or not compensating), or it must come back. */
export type DriveResult = 'finished' | 'not-compensating' | 'unfinished';

const UNRESOLVED = new Set<StepStatus>([StepStatus.INTENDED, StepStatus.UNKNOWN]);

/**
 * Drives the unwind of one COMPENSATING run from the log alone, pass after pass, until it is terminal or
 * `sliceMs` has passed (the sweep brings an unfinished run back). Each pass re-reads the log, so a
 * compensator that crashed halfway, or a second compensator, resumes exactly where the log stands:
 *
 * 1. every INTENDED or UNKNOWN step is reconciled (`reconcileStep`); compensations wait until all are;
 * 2. each step gets its compensation row once (pending or skipped, `planCompensations`);
 * 3. attempts whose lease ran out (their compensator died) become unknown: looked up by key, not resent;
 * 4. the compensations free to run (`planUnwind`) run, up to COMPENSATOR_PARALLELISM at once;
 * 5. when nothing can move any more, `finishRun` decides the terminal status.
 *
 * Leases and due times are judged on the database's clock: the compensations are read with `now()` in the
 * same statement, and a lease is expired by compare-and-set on `lease_until < now()`. Only the slice and
 * the pauses between passes (this process's own budget, deciding nothing about a row) use its clock.
 */
export async function driveRun(d: UnwindDeps, runId: string, sliceMs: number): Promise<DriveResult> {
  const until = Date.now() + sliceMs; // this process's time budget, not a lease: its own clock is right
  const log = d.logger.child({ runId });
  for (;;) {
    if (d.shutdownSignal.aborted) return 'unfinished';
    const run = await d.db
      .selectFrom('runs')
      .select(['status', 'status_reason'])
      .where('run_id', '=', runId)
      .executeTakeFirst();
    if (run?.status !== RunStatus.COMPENSATING) return 'not-compensating';
    const unwindReason = unwindReasonOf(run.status_reason);
    let steps = await listSteps(d.db, runId);

    const unresolved = steps.filter((s) => UNRESOLVED.has(s.status));
    if (unresolved.length) {
      await mapBounded(unresolved, d.config.COMPENSATOR_PARALLELISM, (s) => reconcileStep(d, s));
      steps = await listSteps(d.db, runId);
      if (steps.some((s) => UNRESOLVED.has(s.status))) {
        if (!(await pause(d, until, null, null))) return 'unfinished';
        continue;
      }
    }

    await d.db.transaction().execute((trx) =>
      planCompensations(
        trx,
        steps.filter((s) => s.status !== StepStatus.MANUAL_INTERVENTION),
      ),
    );
    let { comps, dbNow } = await readCompensations(d, runId);
    if (await expireLeases(d, [...comps.values()], dbNow))
      ({ comps, dbNow } = await readCompensations(d, runId));

    const plan = planUnwind(steps, comps, dbNow);
    if (plan.settled) {
      try {
        const done = await d.db.transaction().execute((trx) => finishRun(trx, steps, comps));
        d.metrics?.runsFinished.inc({ status: done.status });
        log.info({ status: done.status, reason: done.status_reason }, 'unwind finished');
      } catch (err) {
        if (!(err instanceof InvalidRunTransitionError)) throw err;
      }
      return 'finished';
    }
    if (plan.ready.length) {
      await mapBounded(plan.ready, d.config.COMPENSATOR_PARALLELISM, (c) =>
        runCompensation(d, c, steps, unwindReason),
      );
      continue;
    }
    if (!(await pause(d, until, plan.nextDueAt, dbNow))) return 'unfinished';
  }
}

/**
 * The run's compensations and the database's `now()`, read in one statement, so that every lease and due
 * time is judged against the clock of the instant the rows were read (the outer join keeps `now()` when
 * the run has no compensation yet).
 */
async function readCompensations(
  d: UnwindDeps,
  runId: string,
): Promise<{ comps: Map<number, CompensationRow>; dbNow: Date }> {
  type Read = (CompensationRow | { readonly run_id: null }) & { readonly db_now: Date };
  const r = await sql<Read>`
    SELECT c.*, clock.db_now
      FROM (SELECT now() AS db_now) clock LEFT JOIN compensations c ON c.run_id = ${runId}`.execute(d.db);
  const comps = new Map<number, CompensationRow>();
  for (const { db_now: _, ...row } of r.rows) if (row.run_id !== null) comps.set(row.step_idx, row);
  return { comps, dbNow: r.rows[0]!.db_now };
}

/**
 * running → unknown for attempts whose lease has run out by the database's clock: whoever held them is
 * gone mid-call. `dbNow` (read with the rows) picks the candidates; the compare-and-set checks
 * `lease_until < now()` again, so a lease is never expired by this process's clock.
 */
async function expireLeases(d: UnwindDeps, comps: readonly CompensationRow[], dbNow: Date): Promise<boolean> {
  const expired = comps.filter(
    (c) => c.status === CompensationStatus.RUNNING && c.lease_until !== null && c.lease_until < dbNow,
  );
  for (const c of expired) {
    try {
      await d.db.transaction().execute((trx) =>
        transitionCompensation(trx, {
          runId: c.run_id,
          stepIdx: c.step_idx,
          to: CompensationStatus.UNKNOWN,
          onlyFrom: [CompensationStatus.RUNNING],
          ...(c.lease_owner !== null ? { leaseOwner: c.lease_owner } : {}),
          atAttempts: c.attempts,
          leaseExpired: true,
          cause: 'lease expired: the attempt may have reached the system',
          detail: { expiredLeaseOwner: c.lease_owner, leaseUntil: c.lease_until, worker: d.workerId },
          patch: { lease_until: null, lease_owner: null, next_attempt_at: sql<Date>`now()` },
        }),
      );
    } catch (err) {
      if (!(err instanceof InvalidTransitionError)) throw err;
    }
  }
  return expired.length > 0;
}

/**
 * Sleeps until `dueAt` (at most COMPENSATOR_POLL_MS); false when the slice is over. `dueAt` is a database
 * timestamp, so the wait is measured from `dbNow` (read with it), never from this process's clock.
 */
async function pause(d: UnwindDeps, until: number, dueAt: Date | null, dbNow: Date | null): Promise<boolean> {
  if (Date.now() >= until) return false;
  const untilDue = dueAt && dbNow ? dueAt.getTime() - dbNow.getTime() : Infinity;
  const wait = Math.max(10, Math.min(d.config.COMPENSATOR_POLL_MS, untilDue));
  await sleep(wait);
  return true;
}

/** Runs `fn` over `items` with at most `limit` at once. */
async function mapBounded<T>(
  items: readonly T[],
  limit: number,
  fn: (t: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
