import { Counter, Gauge, type Registry } from 'prom-client';
import type { SagaDb } from '../db/connect.js';
import type { Logger } from '../process/logger.js';
import { valuesOf } from '../util/values-of.js';
import {
  readOpenCompensations,
  readStaleOutbox,
  readUnclaimedIntents,
  readUnknownSteps,
} from './read-backlog-gauges.js';
import { readCapturesWithoutReservation } from './read-capture-checks.js';
import { readPendingApprovals, readOpenReviews } from './read-review-gauges.js';
import { readOpenRunAges, readRunTotals } from './read-run-gauges.js';
import { sharedRead } from './shared-read.js';

/**
 * The groups of saga-log gauges; each is one read (one or two aggregate queries) shared by its gauges.
 * Each reads through a partial index or a small table of counts (migration 0008), so it costs what is
 * open or unsettled, not the history; the collector is still switched on for one role (`SAGA_LOG_GAUGES`)
 * so that not every replica of every role runs the same reads on each scrape.
 */
export const SagaLogGaugeGroup = {
  /** `saga_runs{status}`, `saga_irreversible_before_pivot_steps`: counts in `run_status_counts`. */
  RUN_TOTALS: 'run_totals',
  /** `saga_stuck_runs{status}`, `saga_stuck_run_oldest_age_seconds{status}`: index `runs_open`. */
  STUCK_RUNS: 'stuck_runs',
  /** `saga_unknown_steps`, `saga_unknown_step_oldest_age_seconds`: index `saga_log_unsettled`. */
  UNKNOWN_STEPS: 'unknown_steps',
  /** `saga_stale_outbox_messages`: index `outbox_unpublished`. */
  STALE_OUTBOX: 'stale_outbox',
  /** `saga_unclaimed_intents`, `saga_oldest_unclaimed_intent_age_seconds`: index `saga_log_unsettled`. */
  UNCLAIMED_INTENTS: 'unclaimed_intents',
  /** `saga_open_compensations{status}`, `saga_open_compensation_max_attempts`: index `compensations_open`. */
  COMPENSATIONS: 'compensations',
  /** `saga_pending_approvals{kind}` and the age and expiry of the oldest: index `approvals_pending`. */
  APPROVALS: 'approvals',
  /** `saga_open_cases`, `saga_open_case_oldest_age_seconds`, `saga_open_corrections{audience}`. */
  REVIEWS: 'reviews',
  /** `saga_captures_without_reservation{tool}`: index `capture_check_runs_violating`. */
  CAPTURES: 'captures',
} as const;
export type SagaLogGaugeGroup = (typeof SagaLogGaugeGroup)[keyof typeof SagaLogGaugeGroup];

/** Why an hour: longer than any tool's timeout and lookup lag, short enough that a person still helps. */
export const DEFAULT_STUCK_RUN_MS = 3_600_000;
/** Why a minute: the relay publishes within RELAY_GRACE_MS (2 s) when it is up. */
export const DEFAULT_STALE_OUTBOX_MS = 60_000;

export interface SagaLogGaugesOptions {
  /** The groups to register (default: every group). */
  readonly groups?: readonly SagaLogGaugeGroup[];
  /** An open run with no change for this long counts in `saga_stuck_runs`. */
  readonly stuckRunMs?: number;
  /** An unpublished outbox message this old counts in `saga_stale_outbox_messages`. */
  readonly staleOutboxMs?: number;
  /** How long a group's read is reused across scrapes (0: once per scrape). */
  readonly cacheMs?: number;
  readonly logger?: Logger;
}

/**
 * Registers the gauges derived from the saga log on `registry`. Nothing is read at registration: each
 * group's queries run when a scrape calls the gauges' `collect()`, shared by the gauges of the group
 * ({@link sharedRead}). A failing read leaves the group's gauges at their last values, counts
 * `saga_log_gauge_errors_total{group}` and logs; the scrape still answers. Each read's duration is exported
 * (`saga_log_gauge_read_duration_seconds{group}`), so the cost of this collector is itself visible.
 */
export function registerSagaLogGauges(registry: Registry, db: SagaDb, opts: SagaLogGaugesOptions = {}): void {
  const groups = new Set<SagaLogGaugeGroup>(opts.groups ?? valuesOf(SagaLogGaugeGroup));
  const registers = [registry];
  /** Every group's shared read: the health metrics wait for them, so a scrape reports its own reads. */
  const reads: (() => Promise<unknown>)[] = [];
  const awaitReads = async (): Promise<void> => void (await Promise.all(reads.map((r) => r())));
  const errors = new Counter({
    name: 'saga_log_gauge_errors_total',
    help: 'Reads of the saga-log gauges that failed (the gauges kept their last values), by group',
    labelNames: ['group'] as const,
    registers,
    collect: awaitReads,
  });
  const duration = new Gauge({
    name: 'saga_log_gauge_read_duration_seconds',
    help: 'Duration of the last read of a group of saga-log gauges',
    labelNames: ['group'] as const,
    registers,
    collect: awaitReads,
  });
  const shared = <T>(group: SagaLogGaugeGroup, read: () => Promise<T>) => {
    const r = sharedRead(read, opts.cacheMs ?? 0, {
      onDuration: (seconds) => duration.set({ group }, seconds),
      onError: (err) => {
        errors.inc({ group });
        opts.logger?.warn({ err, group }, 'saga-log gauge read failed; the gauges keep their last values');
      },
    });
    reads.push(r);
    return r;
  };
  /** A gauge set from a group's snapshot; skipped (last values kept) when the read failed. */
  const gauge = <T, L extends string = never>(
    read: () => Promise<T | undefined>,
    name: string,
    help: string,
    labelNames: readonly L[],
    set: (g: Gauge<L>, snapshot: T) => void,
  ): void => {
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers,
      async collect() {
        const snapshot = await read();
        if (snapshot !== undefined) set(this, snapshot);
      },
    });
  };

  if (groups.has(SagaLogGaugeGroup.RUN_TOTALS)) {
    const read = shared(SagaLogGaugeGroup.RUN_TOTALS, () => readRunTotals(db));
    gauge(read, 'saga_runs', 'Runs by status; terminal counts only grow (rate them)', ['status'], (g, s) => {
      for (const [status, n] of s.byStatus) g.set({ status }, n);
    });
    gauge(
      read,
      'saga_irreversible_before_pivot_steps',
      'Irreversible steps released before any pivot, summed over every run (only grows)',
      [],
      (g, s) => g.set(s.irreversibleBeforePivot),
    );
  }
  if (groups.has(SagaLogGaugeGroup.STUCK_RUNS)) {
    const stuckRunMs = opts.stuckRunMs ?? DEFAULT_STUCK_RUN_MS;
    const read = shared(SagaLogGaugeGroup.STUCK_RUNS, () => readOpenRunAges(db, stuckRunMs));
    gauge(
      read,
      'saga_stuck_runs',
      'Open runs with no change for the stuck-run threshold',
      ['status'],
      (g, s) => {
        for (const [status, a] of s) g.set({ status }, a.stuck);
      },
    );
    gauge(
      read,
      'saga_stuck_run_oldest_age_seconds',
      'Seconds since the longest-idle open run of each status last changed (0 when none)',
      ['status'],
      (g, s) => {
        for (const [status, a] of s) g.set({ status }, a.oldestIdleSeconds);
      },
    );
  }
  if (groups.has(SagaLogGaugeGroup.UNKNOWN_STEPS)) {
    const read = shared(SagaLogGaugeGroup.UNKNOWN_STEPS, () => readUnknownSteps(db));
    gauge(read, 'saga_unknown_steps', 'Steps whose outcome is UNKNOWN', [], (g, s) => g.set(s.count));
    gauge(
      read,
      'saga_unknown_step_oldest_age_seconds',
      'Seconds since the last attempt of the oldest UNKNOWN step was sent (0 when none)',
      [],
      (g, s) => g.set(s.oldestAgeSeconds),
    );
  }
  if (groups.has(SagaLogGaugeGroup.STALE_OUTBOX)) {
    const staleOutboxMs = opts.staleOutboxMs ?? DEFAULT_STALE_OUTBOX_MS;
    const read = shared(SagaLogGaugeGroup.STALE_OUTBOX, () => readStaleOutbox(db, staleOutboxMs));
    gauge(
      read,
      'saga_stale_outbox_messages',
      'Outbox messages unpublished for longer than the stale-outbox threshold',
      [],
      (g, s) => g.set(s.count),
    );
  }
  if (groups.has(SagaLogGaugeGroup.UNCLAIMED_INTENTS)) {
    const read = shared(SagaLogGaugeGroup.UNCLAIMED_INTENTS, () => readUnclaimedIntents(db));
    gauge(read, 'saga_unclaimed_intents', 'INTENDED steps no executor has claimed yet', [], (g, s) =>
      g.set(s.count),
    );
    gauge(
      read,
      'saga_oldest_unclaimed_intent_age_seconds',
      'Seconds the oldest unclaimed INTENDED step has waited since its dispatch (republishes included; 0 when none)',
      [],
      (g, s) => g.set(s.oldestAgeSeconds),
    );
  }
  if (groups.has(SagaLogGaugeGroup.COMPENSATIONS)) {
    const read = shared(SagaLogGaugeGroup.COMPENSATIONS, () => readOpenCompensations(db));
    gauge(read, 'saga_open_compensations', 'Compensations not settled, by status', ['status'], (g, s) => {
      for (const [status, c] of s) g.set({ status }, c.count);
    });
    gauge(
      read,
      'saga_open_compensation_max_attempts',
      'Most attempts made by any open compensation (same key each time)',
      [],
      (g, s) => g.set(Math.max(0, ...[...s.values()].map((c) => c.maxAttempts))),
    );
  }
  if (groups.has(SagaLogGaugeGroup.APPROVALS)) {
    const read = shared(SagaLogGaugeGroup.APPROVALS, () => readPendingApprovals(db));
    gauge(read, 'saga_pending_approvals', 'Approvals waiting for a decision, by kind', ['kind'], (g, s) => {
      for (const [kind, p] of s) g.set({ kind }, p.count);
    });
    gauge(
      read,
      'saga_pending_approval_oldest_age_seconds',
      'Age of the oldest pending approval, by kind (0 when none)',
      ['kind'],
      (g, s) => {
        for (const [kind, p] of s) g.set({ kind }, p.oldestAgeSeconds);
      },
    );
    gauge(
      read,
      'saga_pending_approval_next_expiry_seconds',
      'Seconds until the soonest pending approval expires, by kind (negative: overdue; absent when none)',
      ['kind'],
      (g, s) => {
        g.reset(); // a kind with nothing pending has no deadline: no series, rather than a 0 that alerts
        for (const [kind, p] of s) if (p.nextExpirySeconds !== null) g.set({ kind }, p.nextExpirySeconds);
      },
    );
  }
  if (groups.has(SagaLogGaugeGroup.REVIEWS)) {
    const read = shared(SagaLogGaugeGroup.REVIEWS, () => readOpenReviews(db));
    gauge(read, 'saga_open_cases', 'Manual-intervention cases waiting for a person', [], (g, s) =>
      g.set(s.cases.count),
    );
    gauge(
      read,
      'saga_open_case_oldest_age_seconds',
      'Age of the oldest open manual-intervention case (0 when none)',
      [],
      (g, s) => g.set(s.cases.oldestAgeSeconds),
    );
    gauge(
      read,
      'saga_open_corrections',
      'Corrections waiting for a person, by audience (customer: the customer could see the original)',
      ['audience'],
      (g, s) => {
        for (const [audience, n] of s.corrections) g.set({ audience }, n);
      },
    );
  }
  if (groups.has(SagaLogGaugeGroup.CAPTURES)) {
    const read = shared(SagaLogGaugeGroup.CAPTURES, () => readCapturesWithoutReservation(db));
    gauge(
      read,
      'saga_captures_without_reservation',
      'CONFIRMED capture steps whose run has no CONFIRMED reservation (authorisation) step, by capture tool',
      ['tool'],
      (g, s) => {
        for (const [tool, n] of s) g.set({ tool }, n);
      },
    );
  }
}
