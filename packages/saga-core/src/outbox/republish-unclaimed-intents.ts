import { sql, type RawBuilder } from 'kysely';
import { outboxChannel } from '../db/channels.js';
import type { SagaDb } from '../db/connect.js';
import type { StepRow } from '../db/schema.js';
import { StepEventKind } from '../steps/step-event-kind.js';
import { StepStatus, UNRESOLVED_STEP_STATUSES } from '../steps/step-status.js';
import { literals } from '../metrics/sql-literals.js';
import { appendStepEvent } from '../steps/append-event.js';
import { enqueueNextDispatch } from './enqueue-next-dispatch.js';

/**
 * Why 20 s: a published job is normally claimed within milliseconds, and within a few seconds under a full
 * backlog (50 jobs per executor process, each bounded by its tool's timeout, with the executors scaled to
 * the load). 20 s is well past that yet short next to an agent's patience; a republish that comes too early
 * costs one extra job whose claim finds the step taken and does nothing.
 */
export const DEFAULT_UNCLAIMED_REPUBLISH_MS = 20_000;

/**
 * Why 100: one sweep's transaction holds this many step locks for a few milliseconds; a Redis that lost
 * thousands of jobs is worked off at 100 per sweep (every RECONCILER_SWEEP_MS), oldest first.
 */
export const DEFAULT_REPUBLISH_BATCH = 100;

/** The cause of the event written on each republished step. */
export const REPUBLISH_CAUSE = 'republished: unclaimed after publish';

/** Parameters of {@link republishUnclaimedIntents}. */
export interface RepublishInput {
  /** `$olderThanMs`: the step's latest dispatch was published at least this long ago (`SAGA_UNCLAIMED_REPUBLISH_MS`). */
  readonly olderThanMs: number;
  /** `$limit`: at most this many steps per call. */
  readonly limit?: number;
  /** The schema name, for the NOTIFY channel of the outbox relays. */
  readonly schema: string;
}

/** One step published again. */
export interface Republished {
  readonly runId: string;
  readonly stepIdx: number;
  readonly key: string;
  readonly tool: string;
  /** The new dispatch's number and BullMQ job id (never seen by BullMQ before). */
  readonly dispatchNo: number;
  readonly jobId: string;
  /** Republishes of this step so far, this one included: a high count means no executor takes it. */
  readonly republishes: number;
  /** Seconds since the step became INTENDED for its current dispatch, by the database's clock. */
  readonly unclaimedSeconds: number;
}

/** A step {@link lockUnclaimedIntents} locked, with its latest dispatch and how long it has waited. */
export type UnclaimedCandidate = StepRow & {
  readonly prev_job_id: string;
  readonly prev_published_at: Date;
  readonly unclaimed_s: number;
  readonly republished: number;
};

/**
 * Publishes again every INTENDED step that no executor has claimed although its latest dispatch was
 * published `$olderThanMs` ago: the job was lost (Redis restarted without persistence, or was flushed), or
 * it failed before its claim and BullMQ keeps its job id (`removeOnFail`), so the same id cannot be added
 * again. Each gets a new outbox message under a fresh job id (`enqueueNextDispatch`: the next dispatch
 * number), due at once (`relay_after = now()`), the relays woken by NOTIFY, and an event on the step.
 *
 * ```sql
 * SELECT s.* FROM saga_log s
 *  WHERE s.status IN ('INTENDED', 'UNKNOWN') AND s.status = 'INTENDED'   -- saga_log_unsettled's predicate
 *    AND s.lease_until IS NULL                                           -- no executor has claimed it
 *    AND s.updated_at < now() - $olderThanMs                             -- cheap bound on the index
 *    AND (SELECT published_at FROM outbox o WHERE o.idempotency_key = s.idempotency_key
 *          ORDER BY o.id DESC LIMIT 1) < now() - $olderThanMs              -- latest dispatch, via outbox_by_key
 *  ORDER BY s.lease_until NULLS FIRST, s.updated_at LIMIT $limit
 *  FOR UPDATE OF s SKIP LOCKED;
 * -- then, in a new statement (fresh snapshot), the latest dispatch is checked again, and per step:
 * -- enqueueNextDispatch, the event; one pg_notify for the relays.
 * ```
 *
 * Unclaimed means `lease_until IS NULL`: a claim sets the lease in the same compare-and-set that counts the
 * attempt, and a step becomes INTENDED without a lease only with a new dispatch written beside it (the
 * intake, the release of a held step, a re-dispatch after NOT_EXECUTED). An INTENDED step with a lease (live
 * or lapsed) is an executor's or the reconciler's.
 *
 * A latest dispatch still unpublished is the relays' (they add it, and the add is real since Redis no
 * longer has that id); republishing it would stack messages that an absent relay would not send either.
 * Every age is measured by the database's clock (`now()`).
 *
 * `FOR UPDATE SKIP LOCKED`, so two reconcilers never republish one step at once; the re-check of the latest
 * dispatch in a later statement sees a republish another reconciler committed after this statement's
 * snapshot was taken (the step row itself is not updated, so the row lock alone would not make it visible).
 *
 * Running a step twice is still guarded by the executor's claim alone: the claim is a compare-and-set on
 * (INTENDED, no lease) by key, whatever the job id or dispatch number, so of the old job (if it comes back)
 * and the new one exactly one claims; the other finds the lease or the settled step and does nothing.
 *
 * Budget: a republish does not count against the re-dispatch budget (`SAGA_MAX_REDISPATCHES`). That budget
 * stops a call that keeps failing before the vendor; a republish follows a lost message, not a failed
 * call, and capping it would strand intents after every Redis restart. A step republished again and again
 * (no executor runs, or none has the tool) shows in `republishes` (logged by the caller) and in the gauge
 * `saga_oldest_unclaimed_intent_age_seconds`, which a republish does not reset, and its alert.
 */
export async function republishUnclaimedIntents(db: SagaDb, r: RepublishInput): Promise<Republished[]> {
  return db.transaction().execute(async (trx) => {
    const found = await lockUnclaimedIntents(r.olderThanMs, r.limit ?? DEFAULT_REPUBLISH_BATCH).execute(trx);
    if (found.rows.length === 0) return [];

    // A fresh snapshot: the latest dispatch of each locked step, as committed now.
    const still = await sql<{ key: string; job_id: string }>`
      SELECT DISTINCT ON (idempotency_key) idempotency_key AS key, job_id
        FROM outbox
       WHERE idempotency_key = ANY(${found.rows.map((c) => c.idempotency_key)}::text[])
       ORDER BY idempotency_key, id DESC`.execute(trx);
    const latestJob = new Map(still.rows.map((x) => [x.key, x.job_id]));

    const out: Republished[] = [];
    for (const c of found.rows) {
      // Another reconciler republished it after this transaction's first snapshot: leave it.
      if (latestJob.get(c.idempotency_key) !== c.prev_job_id) continue;
      const { dispatchNo, jobId } = await enqueueNextDispatch(trx, c, {
        schema: r.schema,
        notifyRelay: false,
      });
      await appendStepEvent(trx, {
        runId: c.run_id,
        stepIdx: c.step_idx,
        kind: StepEventKind.TRANSITION,
        from: StepStatus.INTENDED,
        to: StepStatus.INTENDED,
        cause: REPUBLISH_CAUSE,
        detail: {
          dispatchNo,
          jobId,
          previousJobId: c.prev_job_id,
          previousPublishedAt: c.prev_published_at,
          attempts: c.attempts,
          unclaimedSeconds: Math.round(c.unclaimed_s),
        },
      });
      out.push({
        runId: c.run_id,
        stepIdx: c.step_idx,
        key: c.idempotency_key,
        tool: c.tool,
        dispatchNo,
        jobId,
        republishes: c.republished + 1,
        unclaimedSeconds: c.unclaimed_s,
      });
    }
    if (out.length > 0) await sql`SELECT pg_notify(${outboxChannel(r.schema)}, '')`.execute(trx);
    return out;
  });
}

/**
 * The first statement of {@link republishUnclaimedIntents} (see there): locks up to `limit` unclaimed
 * INTENDED steps whose latest dispatch was published `olderThanMs` ago. Exported for its plan's test.
 */
export function lockUnclaimedIntents(olderThanMs: number, limit: number): RawBuilder<UnclaimedCandidate> {
  const secs = olderThanMs / 1000;
  return sql<UnclaimedCandidate>`
      SELECT s.*, latest.job_id AS prev_job_id, latest.published_at AS prev_published_at,
             extract(epoch FROM now() - s.updated_at)::float8 AS unclaimed_s,
             (SELECT count(*)::int FROM step_events e
               WHERE e.run_id = s.run_id AND e.step_idx = s.step_idx
                 AND e.kind = ${StepEventKind.TRANSITION} AND e.cause = ${REPUBLISH_CAUSE}) AS republished
        FROM saga_log s
        CROSS JOIN LATERAL (
          SELECT o.job_id, o.published_at FROM outbox o
           WHERE o.idempotency_key = s.idempotency_key
           ORDER BY o.id DESC LIMIT 1) latest
       WHERE s.status IN (${literals(UNRESOLVED_STEP_STATUSES)})
         AND s.status = ${sql.lit(StepStatus.INTENDED)}
         AND s.lease_until IS NULL
         AND s.updated_at < now() - make_interval(secs => ${secs})
         AND latest.published_at < now() - make_interval(secs => ${secs})
       ORDER BY s.lease_until NULLS FIRST, s.updated_at
       LIMIT ${limit}
       FOR UPDATE OF s SKIP LOCKED`;
}
