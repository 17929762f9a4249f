import type { Queue } from 'bullmq';
import { sql } from 'kysely';
import { CrashPoint, EXECUTE_TOPIC, type Logger, type SagaDb } from '@agent-saga/core';
import { executeJobSchema, publishExecute, type ExecuteJob } from '../queue/execute-queue.js';

/** Parameters of {@link publishOutboxBatch}. */
export interface PublishBatchInput {
  /** Rows per batch (`RELAY_BATCH_SIZE`). */
  readonly limit: number;
  readonly crash: (point: CrashPoint) => void;
  readonly logger: Logger;
}

export interface PublishBatchResult {
  /** Rows published and marked. */
  readonly published: number;
  /** The batch was full: more rows may be waiting. */
  readonly full: boolean;
  /** Age of the oldest row of the batch in ms (0 for an empty batch). */
  readonly oldestAgeMs: number;
}

/**
 * Publishes one batch of unpublished `execute` outbox rows to BullMQ and marks them, in one transaction:
 *
 * ```sql
 * SELECT id, job_id, payload FROM outbox
 *  WHERE topic = 'execute' AND published_at IS NULL AND relay_after <= now()
 *  ORDER BY id LIMIT $limit FOR UPDATE SKIP LOCKED;
 * -- add each job (jobId = outbox.job_id), then:
 * UPDATE outbox SET published_at = now() WHERE id = ANY($ids);
 * ```
 *
 * `FOR UPDATE SKIP LOCKED`: several relays run at once and never take the same rows; a relay that dies
 * mid-batch drops its connection, which releases its locks. A crash between the adds and the mark
 * (`after-publish-before-mark`) leaves the rows unpublished: the next sweep adds them again, and the
 * deterministic `jobId` makes that a no-op in BullMQ (and if the job already ran, the executor's claim
 * finds the step no longer INTENDED-and-free and does nothing).
 */
export async function publishOutboxBatch(
  db: SagaDb,
  queue: Queue<ExecuteJob>,
  b: PublishBatchInput,
): Promise<PublishBatchResult> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('outbox')
      .select(['id', 'job_id', 'payload'])
      .select(sql<number>`(extract(epoch from now() - created_at) * 1000)::float8`.as('age_ms'))
      .where('topic', '=', EXECUTE_TOPIC)
      .where('published_at', 'is', null)
      .where('relay_after', '<=', sql<Date>`now()`)
      .orderBy('id')
      .limit(b.limit)
      .forUpdate()
      .skipLocked()
      .execute();
    if (rows.length === 0) return { published: 0, full: false, oldestAgeMs: 0 };

    const valid: { id: string; jobId: string; data: ExecuteJob }[] = [];
    for (const r of rows) {
      const data = executeJobSchema.safeParse(r.payload);
      // Our own writes; a row that does not parse is a bug to see, not a job to guess at. It stays
      // unpublished (and logged at every sweep) rather than being marked as if it had been sent.
      if (data.success) valid.push({ id: r.id, jobId: r.job_id, data: data.data });
      else b.logger.error({ outboxId: r.id, issues: data.error.issues }, 'outbox payload does not parse');
    }
    await Promise.all(valid.map((v) => publishExecute(queue, v.jobId, v.data)));
    b.crash(CrashPoint.AFTER_PUBLISH_BEFORE_MARK);
    if (valid.length > 0)
      await trx
        .updateTable('outbox')
        .set({ published_at: sql<Date>`now()` })
        .where(
          'id',
          'in',
          valid.map((v) => v.id),
        )
        .execute();
    return {
      published: valid.length,
      full: rows.length === b.limit,
      oldestAgeMs: Math.max(...rows.map((r) => r.age_ms)),
    };
  });
}
