import type { Queue } from 'bullmq';
import {
  CrashPoint,
  executeJobSchema,
  withinMs,
  type ExecuteJob,
  type Logger,
  type SagaDb,
} from '@agent-saga/core';
import { publishExecute } from '../queue/execute-queue.js';
import { claimOutboxRows, markOutboxPublished, releaseOutboxClaim } from './claim-outbox-rows.js';

/** Parameters of {@link publishOutboxBatch}. */
export interface PublishBatchInput {
  /** Rows per batch (`RELAY_BATCH_SIZE`). */
  readonly limit: number;
  /** How long the claim keeps other relays off the batch (`RELAY_CLAIM_LEASE_MS`). */
  readonly leaseMs: number;
  /** Bound on publishing the whole batch to Redis, in ms; must be well under `leaseMs`. */
  readonly publishTimeoutMs: number;
  readonly crash: (point: CrashPoint) => void;
  readonly logger: Logger;
}

export interface PublishBatchResult {
  /** Rows published and marked. */
  readonly published: number;
  /** Rows claimed whose publish failed (Redis down); given back for the next sweep. */
  readonly failed: number;
  /** The batch was full and all of it went out: more rows may be waiting. */
  readonly full: boolean;
  /** Age of the oldest row of the batch in ms (0 for an empty batch). */
  readonly oldestAgeMs: number;
}

/**
 * Publishes one batch of unpublished `execute` outbox rows to BullMQ and marks them, in three short steps,
 * none of which holds a transaction open across a Redis call:
 *
 * 1. claim: one committed statement moves the rows' `relay_after` past a lease (`claimOutboxRows`);
 * 2. publish: one BullMQ add per row (jobId = `outbox.job_id`), all bounded by `publishTimeoutMs`;
 * 3. mark: one statement sets `published_at` on the rows that went out (`markOutboxPublished`); the rows
 *    that did not are given back at once (`releaseOutboxClaim`).
 *
 * A relay that dies between 2 and 3 (`after-publish-before-mark`) leaves its rows claimed but unpublished:
 * once the lease ends another relay (or the same one restarted) claims and adds them again, and the
 * deterministic `jobId` makes that a no-op in BullMQ (and if the job already ran, the executor's claim
 * finds the step no longer INTENDED-and-free and does nothing). While Redis is down, the adds fail fast
 * (a producer connection has no offline queue) or hit the bound, the rows are given back, and the poll
 * tries again; with Postgres down, the claim fails and nothing was taken.
 */
export async function publishOutboxBatch(
  db: SagaDb,
  queue: Queue<ExecuteJob>,
  b: PublishBatchInput,
): Promise<PublishBatchResult> {
  const rows = await claimOutboxRows(db, { limit: b.limit, leaseMs: b.leaseMs });
  if (rows.length === 0) return { published: 0, failed: 0, full: false, oldestAgeMs: 0 };

  const valid: { id: string; jobId: string; data: ExecuteJob }[] = [];
  for (const r of rows) {
    const data = executeJobSchema.safeParse(r.payload);
    // Our own writes; a row that does not parse is a bug to see, not a job to guess at. It stays
    // unpublished (and logged whenever its claim ends) rather than being marked as if it had been sent.
    if (data.success) valid.push({ id: r.id, jobId: r.job_id, data: data.data });
    else b.logger.error({ outboxId: r.id, issues: data.error.issues }, 'outbox payload does not parse');
  }
  const adds = await withinMs(
    Promise.allSettled(valid.map((v) => publishExecute(queue, v.jobId, v.data))),
    b.publishTimeoutMs,
    'outbox publish',
  ).catch(() => valid.map(() => ({ status: 'rejected' as const, reason: 'publish timed out' })));
  b.crash(CrashPoint.AFTER_PUBLISH_BEFORE_MARK);
  const sent = valid.filter((_, i) => adds[i]?.status === 'fulfilled').map((v) => v.id);
  const unsent = valid.filter((_, i) => adds[i]?.status !== 'fulfilled').map((v) => v.id);
  await markOutboxPublished(db, sent);
  if (unsent.length > 0) {
    const reason: unknown = adds.flatMap((a) => (a.status === 'rejected' ? [a.reason as unknown] : []))[0];
    b.logger.warn({ err: reason, unsent: unsent.length }, 'outbox publish failed; rows given back');
    await releaseOutboxClaim(db, unsent).catch((err: unknown) =>
      b.logger.warn({ err }, 'giving back the claim failed; it ends with its lease'),
    );
  }
  return {
    published: sent.length,
    failed: unsent.length,
    full: rows.length === b.limit && unsent.length === 0,
    oldestAgeMs: Math.max(...rows.map((r) => r.age_ms)),
  };
}
