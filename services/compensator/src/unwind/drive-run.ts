import { setTimeout as sleep } from 'node:timers/promises';
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
 */
export async function driveRun(d: UnwindDeps, runId: string, sliceMs: number): Promise<DriveResult> {
  const until = Date.now() + sliceMs;
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
        if (!(await pause(d, until, null))) return 'unfinished';
        continue;
      }
    }

    await d.db.transaction().execute((trx) =>
      planCompensations(
        trx,
        steps.filter((s) => s.status !== StepStatus.MANUAL_INTERVENTION),
      ),
    );
    let comps = await readCompensations(d, runId);
    if (await expireLeases(d, [...comps.values()])) comps = await readCompensations(d, runId);

    const plan = planUnwind(steps, comps, new Date());
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
    if (!(await pause(d, until, plan.nextDueAt))) return 'unfinished';
  }
}

async function readCompensations(d: UnwindDeps, runId: string): Promise<Map<number, CompensationRow>> {
  const rows = await d.db.selectFrom('compensations').selectAll().where('run_id', '=', runId).execute();
  return new Map(rows.map((r) => [r.step_idx, r]));
}

/** running → unknown for attempts whose lease has run out: whoever held them is gone mid-call. */
async function expireLeases(d: UnwindDeps, comps: readonly CompensationRow[]): Promise<boolean> {
  const now = new Date();
  const expired = comps.filter(
    (c) => c.status === CompensationStatus.RUNNING && c.lease_until !== null && c.lease_until < now,
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
          cause: 'lease expired: the attempt may have reached the system',
          detail: { expiredLeaseOwner: c.lease_owner, leaseUntil: c.lease_until, worker: d.workerId },
          patch: { lease_until: null, lease_owner: null, next_attempt_at: now },
        }),
      );
    } catch (err) {
      if (!(err instanceof InvalidTransitionError)) throw err;
    }
  }
  return expired.length > 0;
}

/** Sleeps until `dueAt` (at most COMPENSATOR_POLL_MS); false when the slice is over. */
async function pause(d: UnwindDeps, until: number, dueAt: Date | null): Promise<boolean> {
  if (Date.now() >= until) return false;
  const wait = Math.max(
    10,
    Math.min(d.config.COMPENSATOR_POLL_MS, (dueAt?.getTime() ?? Infinity) - Date.now()),
  );
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
