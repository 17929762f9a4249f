import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import {
  authorityLapsed,
  CompensationStatus,
  InvalidRunTransitionError,
  InvariantUnverifiedError,
  recoveryPolicyOf,
  InvalidTransitionError,
  lazyChildLogger,
  RunStatus,
  StepStatus,
  transitionCompensation,
  unwindReasonOf,
  type CompensationRow,
  type Logger,
  type RunRow,
} from '@agent-saga/core';
import type { RunState } from '../sql/read-run-states.js';
import { awaitRenewal } from './await-renewal.js';
import { planUnwind } from './compensation-order.js';
import {
  checkCompensated,
  closesRunOnly,
  decideFinish,
  finishRun,
  requestedReasonSuffix,
} from './finish-run.js';
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
 * 4. the compensations free to run (`planUnwind`) run, up to COMPENSATOR_PARALLELISM at once, unless the
 *    run's authority has lapsed (`policy.authorityTtlMs`): then nothing is sent and the run waits for a
 *    renewal (`awaitRenewal`); a compensation the run policy wants a person for is held with its approval
 *    (`checkApproval`), and the rest goes on around it;
 * 5. when nothing can move any more, `decideFinish` decides the terminal status and `finishRun` (or, with
 *    nothing but the run's move to write, `finishRunsBatch`) writes it.
 *
 * A run that waits only for people (a held compensation, a renewal) ends its slice at once: the decision
 * wakes the compensators (NOTIFY), and the sweep brings it back meanwhile.
 *
 * The reads and the common writes go through this process's statement groups (`unwind-groups.ts`), shared
 * with the other runs being unwound at the same moment; each is still a compare-and-set on what this
 * pass read.
 *
 * Leases and due times are judged on the database's clock: the compensations are read with `now()` in the
 * same statement, and a lease is expired by compare-and-set on `lease_until < now()`. Only the slice and
 * the pauses between passes (this process's own budget, deciding nothing about a row) use its clock.
 */
export async function driveRun(d: UnwindDeps, runId: string, sliceMs: number): Promise<DriveResult> {
  const until = Date.now() + sliceMs; // this process's time budget, not a lease: its own clock is right
  const log = lazyChildLogger(d.logger, { runId });
  for (;;) {
    if (d.shutdownSignal.aborted) return 'unfinished';
    let state = await d.groups.read.submit(runId);
    const run = state.run;
    if (run?.status !== RunStatus.COMPENSATING) return 'not-compensating';
    const unwindReason = unwindReasonOf(run.status_reason);

    const unresolved = state.steps.filter((s) => UNRESOLVED.has(s.status));
    if (unresolved.length) {
      await mapBounded(unresolved, d.config.COMPENSATOR_PARALLELISM, (s) => reconcileStep(d, s));
      state = await d.groups.read.submit(runId);
      if (state.steps.some((s) => UNRESOLVED.has(s.status))) {
        if (!(await pause(d, until, null, null))) return 'unfinished';
        continue;
      }
    }

    state = await planMissing(d, runId, state);
    if (await expireLeases(d, [...state.comps.values()], state.dbNow))
      state = await d.groups.read.submit(runId);

    const plan = planUnwind(state.steps, state.comps, state.dbNow);
    if (plan.settled)
      return finishUnwind(d, { runId, tenantId: run.tenant_id }, state, run.status_reason, log);
    const policy = recoveryPolicyOf(run.policy);
    if (plan.ready.length) {
      // Judged on the database's clock, read with the rows; checked again under the run's lock.
      if (authorityLapsed(policy, run.authority_at, state.dbNow)) {
        const wait = await awaitRenewal(d, state, policy, unwindReason, log);
        if (wait === 'waiting') return 'unfinished';
        if (wait === 'not-compensating') return 'not-compensating';
      }
      await mapBounded(plan.ready, d.config.COMPENSATOR_PARALLELISM, (c) =>
        runCompensation(d, c, state.steps, unwindReason, policy),
      );
      continue;
    }
    if (plan.awaitingPeople && plan.nextDueAt === null) return 'unfinished';
    if (!(await pause(d, until, plan.nextDueAt, state.dbNow))) return 'unfinished';
  }
}

/**
 * Plans the compensation of every settled step that has none yet (never a MANUAL_INTERVENTION step: its
 * effect is unknown), and returns the state with the planned rows. When a row was planned by someone else
 * meanwhile (absent from what this statement inserted), the state is read again rather than guessed: a
 * compensation missing from the map would let the run finish with it undone.
 */
async function planMissing(d: UnwindDeps, runId: string, state: RunState): Promise<RunState> {
  const unplanned = state.steps.filter(
    (s) => s.status !== StepStatus.MANUAL_INTERVENTION && !state.comps.has(s.step_idx),
  );
  if (unplanned.length === 0) return state;
  const planned = await d.groups.plan.submit(unplanned);
  if (planned.length < unplanned.length) return d.groups.read.submit(runId);
  const comps = new Map<number, CompensationRow>(state.comps);
  for (const row of planned) comps.set(row.step_idx, row);
  return { ...state, comps };
}

/**
 * Ends a settled unwind: the decision from the rows this pass read, written with the other runs finishing
 * now when it is the run's move alone, else in its own transaction. A run another compensator finished
 * meanwhile is finished (its compare-and-set from COMPENSATING finds it moved; nothing is written).
 */
async function finishUnwind(
  d: UnwindDeps,
  of: { readonly runId: string; readonly tenantId: string },
  state: RunState,
  seenReason: string | null,
  log: Logger,
): Promise<DriveResult> {
  const decision = decideFinish(of, state.steps, state.comps);
  // A bound run's COMPENSATED waits on its invariant, checked here, before any transaction.
  const bound = (state.run?.definition_name ?? null) !== null;
  const check = await checkCompensated(d.db, decision, bound, d.invariants);
  let done: RunRow | null = null;
  if (closesRunOnly(decision, check))
    done = await d.groups.finish.submit({
      runId: decision.runId,
      to: decision.to,
      reason: `${decision.reason}${requestedReasonSuffix(seenReason)}`,
      seenReason,
    });
  try {
    done ??= await d.db.transaction().execute((trx) => finishRun(trx, decision, check));
  } catch (err) {
    if (err instanceof InvariantUnverifiedError) {
      log.warn({ why: err.why }, 'unwind settled; its invariant is not verified yet: checked again later');
      return 'unfinished';
    }
    if (!(err instanceof InvalidRunTransitionError)) throw err;
    return 'finished';
  }
  d.metrics?.runsFinished.inc({ status: done.status });
  log.info({ status: done.status, reason: done.status_reason }, 'unwind finished');
  return 'finished';
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
