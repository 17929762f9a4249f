import { sql } from 'kysely';
import {
  OPEN_RUN_STATUSES,
  sqlLiterals,
  StepStatus,
  UNRESOLVED_STEP_STATUSES,
  type SagaDb,
} from '@agent-saga/core';

/** How much of something is late, and since when. */
export interface LateWork {
  readonly count: number;
  /** Age of the oldest, in seconds (0 when none). */
  readonly oldestAgeSeconds: number;
  /** A few ids, oldest first, for the log line. */
  readonly sample: readonly string[];
}

const SAMPLE = 10;

/**
 * Runs in a non-terminal state with no change for `olderThanMs`: an agent gone silent, an unwind that
 * stopped. Reads through the partial index `runs_open` (status literals, so the planner can prove it).
 */
export async function findStuckRuns(db: SagaDb, olderThanMs: number): Promise<LateWork> {
  return late(
    db,
    sql`SELECT run_id AS id, updated_at AS since FROM runs
         WHERE status IN (${sqlLiterals(OPEN_RUN_STATUSES)})
           AND updated_at < now() - make_interval(secs => ${olderThanMs / 1000})`,
  );
}

/**
 * Outbox messages still unpublished `olderThanMs` after their commit: the relay is down or behind, and the
 * steps they carry are INTENDED with no executor on them. Reads through `outbox_unpublished`.
 */
export async function findStaleOutbox(db: SagaDb, olderThanMs: number): Promise<LateWork> {
  return late(
    db,
    sql`SELECT job_id AS id, created_at AS since FROM outbox
         WHERE published_at IS NULL
           AND created_at < now() - make_interval(secs => ${olderThanMs / 1000})`,
  );
}

/**
 * UNKNOWN steps and how long since their last attempt was sent: what the reconciler still owes. Reads
 * through `saga_log_unsettled`.
 */
export async function findUnknownSteps(db: SagaDb): Promise<LateWork> {
  return late(
    db,
    sql`SELECT idempotency_key AS id, coalesce(last_attempt_at, created_at) AS since FROM saga_log
         WHERE status IN (${sqlLiterals(UNRESOLVED_STEP_STATUSES)})
           AND status = ${sql.lit(StepStatus.UNKNOWN)}`,
  );
}

async function late(db: SagaDb, rows: ReturnType<typeof sql>): Promise<LateWork> {
  const r = await sql<{ count: string; oldest: number | null; sample: string[] | null }>`
    WITH late AS (${rows})
    SELECT count(*)::text AS count,
           extract(epoch FROM now() - min(since))::float8 AS oldest,
           (SELECT array_agg(id) FROM (SELECT id FROM late ORDER BY since LIMIT ${SAMPLE}) s) AS sample
      FROM late`.execute(db);
  const row = r.rows[0];
  return {
    count: Number(row?.count ?? 0),
    oldestAgeSeconds: Math.max(0, row?.oldest ?? 0),
    sample: row?.sample ?? [],
  };
}
