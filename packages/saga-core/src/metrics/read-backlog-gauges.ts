import { sql } from 'kysely';
import type { SagaDb } from '../db/connect.js';
import { CompensationStatus } from '../compensations/compensation-status.js';
import { StepStatus, UNRESOLVED_STEP_STATUSES } from '../steps/step-status.js';
import { valuesOf } from '../util/values-of.js';
import { literals } from './sql-literals.js';

/** How much of something waits, and for how long the oldest has. */
export interface Backlog {
  readonly count: number;
  /** Age of the oldest, in seconds (0 when none). */
  readonly oldestAgeSeconds: number;
}

/**
 * UNKNOWN steps and the time since the oldest one's last attempt was sent: what the reconciler still owes.
 * `status IN (unresolved) AND status = UNKNOWN` repeats the predicate of `saga_log_unsettled` so the planner
 * can use that partial index: the cost follows the unsettled steps, not the log.
 */
export async function readUnknownSteps(db: SagaDb): Promise<Backlog> {
  const r = await sql<{ n: number; oldest: number | null }>`
    SELECT count(*)::float8 AS n,
           extract(epoch FROM now() - min(coalesce(last_attempt_at, created_at)))::float8 AS oldest
      FROM saga_log
     WHERE status IN (${literals(UNRESOLVED_STEP_STATUSES)})
       AND status = ${sql.lit(StepStatus.UNKNOWN)}`.execute(db);
  return backlog(r.rows[0]);
}

/**
 * INTENDED steps no executor has claimed (no lease), and how long the oldest has waited since it became
 * INTENDED for its current dispatch (`updated_at`: the intake, a release or a re-dispatch; a republish of a
 * lost job does not move it, so a step republished again and again keeps ageing). Includes intents written
 * a moment ago: the count is the executors' queue as the log sees it; the age is what alerts. Same
 * predicate as `saga_log_unsettled` plus `lease_until IS NULL`, its first column: the cost follows the
 * unsettled steps, not the log.
 */
export async function readUnclaimedIntents(db: SagaDb): Promise<Backlog> {
  const r = await unclaimedIntentsQuery().execute(db);
  return backlog(r.rows[0]);
}

/** The statement of {@link readUnclaimedIntents}, exported for its plan's test. */
export const unclaimedIntentsQuery = () => sql<{ n: number; oldest: number | null }>`
    SELECT count(*)::float8 AS n, extract(epoch FROM now() - min(updated_at))::float8 AS oldest
      FROM saga_log
     WHERE status IN (${literals(UNRESOLVED_STEP_STATUSES)})
       AND status = ${sql.lit(StepStatus.INTENDED)}
       AND lease_until IS NULL`;

/**
 * Outbox messages still unpublished `staleOutboxMs` after their commit: the relay is down or behind, and
 * the steps they carry wait INTENDED with no executor on them. Reads through `outbox_unpublished`.
 */
export async function readStaleOutbox(db: SagaDb, staleOutboxMs: number): Promise<Backlog> {
  const r = await sql<{ n: number; oldest: number | null }>`
    SELECT count(*)::float8 AS n, extract(epoch FROM now() - min(created_at))::float8 AS oldest
      FROM outbox
     WHERE published_at IS NULL
       AND created_at < now() - make_interval(secs => ${staleOutboxMs / 1000})`.execute(db);
  return backlog(r.rows[0]);
}

/** Compensations not yet settled: the predicate of the index `compensations_open`. */
export const OPEN_COMPENSATION_STATUSES: readonly CompensationStatus[] = valuesOf(CompensationStatus).filter(
  (s) => s !== CompensationStatus.COMPENSATED && s !== CompensationStatus.SKIPPED,
);

/** Open compensations of one status. */
export interface OpenCompensations {
  readonly count: number;
  /** Most attempts any of them has made (same key every time): a compensation failing again and again. */
  readonly maxAttempts: number;
}

/**
 * Open compensations by status (pending, running, unknown, failed: refused and waiting for a retry, or
 * given up and waiting for a person) and the most attempts any has made. Reads through `compensations_open`.
 */
export async function readOpenCompensations(
  db: SagaDb,
): Promise<ReadonlyMap<CompensationStatus, OpenCompensations>> {
  const r = await sql<{ status: CompensationStatus; n: number; max_attempts: number }>`
    SELECT status, count(*)::float8 AS n, max(attempts)::float8 AS max_attempts
      FROM compensations
     WHERE status IN (${literals(OPEN_COMPENSATION_STATUSES)})
     GROUP BY status`.execute(db);
  const open = new Map<CompensationStatus, OpenCompensations>(
    OPEN_COMPENSATION_STATUSES.map((s) => [s, { count: 0, maxAttempts: 0 }]),
  );
  for (const row of r.rows) open.set(row.status, { count: row.n, maxAttempts: row.max_attempts });
  return open;
}

const backlog = (row: { n: number; oldest: number | null } | undefined): Backlog => ({
  count: row?.n ?? 0,
  oldestAgeSeconds: Math.max(0, row?.oldest ?? 0),
});
