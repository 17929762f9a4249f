import { Audience, CompensationStatus, type CompensationRow, type StepRow } from '@agent-saga/core';

/** Compensation statuses after which a step no longer holds up the compensations of its dependencies. */
const UNDONE = new Set<CompensationStatus>([CompensationStatus.COMPENSATED, CompensationStatus.SKIPPED]);

/** The steps `step` depends on: its declared `depends_on`, or by default every earlier step of the run. */
export function dependenciesOf(step: StepRow, all: readonly StepRow[]): readonly number[] {
  return step.depends_on ?? all.filter((s) => s.step_idx < step.step_idx).map((s) => s.step_idx);
}

/** Whether a compensation may run now as far as its own state goes (due, not held by an attempt). */
function due(c: CompensationRow, now: Date): boolean {
  // A pending compensation is due at once, unless its precondition could not be read (re-check at `next_attempt_at`).
  if (c.status === CompensationStatus.PENDING) return c.next_attempt_at === null || c.next_attempt_at <= now;
  if (c.status === CompensationStatus.UNKNOWN || c.status === CompensationStatus.FAILED)
    return c.next_attempt_at !== null && c.next_attempt_at <= now;
  return false;
}

/** A failed compensation past its budget: only a person can move it. */
export function isExhausted(c: CompensationRow): boolean {
  return c.status === CompensationStatus.FAILED && c.next_attempt_at === null;
}

export interface UnwindPlan {
  /** Compensations to start now, internal audiences first. */
  readonly ready: readonly CompensationRow[];
  /** Nothing can move any more without a person (or everything is done). */
  readonly settled: boolean;
  /** When the next backoff or re-check falls due, if any. */
  readonly nextDueAt: Date | null;
  /** A compensation waits for a person's decision (awaiting_approval): the run cannot finish before it. */
  readonly awaitingPeople: boolean;
}

/**
 * Decides what may run now. Dependency order is a hard constraint: a step's compensation runs only after
 * every step that depends on it is undone (compensated) or has nothing to undo (skipped), which for the
 * default dependencies is reverse step order. Among the compensations free to run, effects that only
 * internal audiences saw go first; a customer-visible one starts only when no internal one is ready or
 * running. A compensation held for a person (awaiting_approval) is neither due nor undone: the rest of the
 * unwind goes on around it, the compensations that must come after it (its dependencies) wait with it,
 * and the run is not settled until it is decided. Pure: reads rows, decides, writes nothing. `now` is the database's `now()`, read with the rows
 * (the due times it is compared with were written on that clock), never the process's.
 */
export function planUnwind(
  steps: readonly StepRow[],
  comps: ReadonlyMap<number, CompensationRow>,
  now: Date,
): UnwindPlan {
  const dependents = new Map<number, number[]>();
  for (const s of steps)
    for (const d of dependenciesOf(s, steps)) dependents.set(d, [...(dependents.get(d) ?? []), s.step_idx]);
  const undone = (idx: number) => {
    const c = comps.get(idx);
    return c !== undefined && UNDONE.has(c.status);
  };
  const audienceOf = new Map(steps.map((s) => [s.step_idx, s.audience]));
  const customerVisible = (c: CompensationRow) =>
    (audienceOf.get(c.step_idx) ?? []).includes(Audience.CUSTOMER);

  const free = [...comps.values()].filter(
    (c) => due(c, now) && (dependents.get(c.step_idx) ?? []).every(undone),
  );
  const running = [...comps.values()].filter((c) => c.status === CompensationStatus.RUNNING);
  const internalBusy = [...free, ...running].some((c) => !customerVisible(c));
  const ready = free
    .filter((c) => !internalBusy || !customerVisible(c))
    .sort((a, b) => b.step_idx - a.step_idx);

  const waiting = [...comps.values()].filter(
    (c) =>
      c.status === CompensationStatus.AWAITING_APPROVAL ||
      c.status === CompensationStatus.RUNNING ||
      c.status === CompensationStatus.UNKNOWN ||
      (c.status === CompensationStatus.PENDING && c.next_attempt_at !== null && c.next_attempt_at > now) ||
      (c.status === CompensationStatus.FAILED && !isExhausted(c)),
  );
  const dues = waiting.map((c) => c.next_attempt_at ?? c.lease_until).filter((d): d is Date => d !== null);
  return {
    ready,
    settled: ready.length === 0 && waiting.length === 0 && free.length === 0,
    nextDueAt: dues.length ? new Date(Math.min(...dues.map((d) => d.getTime()))) : null,
    awaitingPeople: waiting.some((c) => c.status === CompensationStatus.AWAITING_APPROVAL),
  };
}
