import { sql } from 'kysely';
import { EXECUTE_TOPIC, type SagaDb } from '@agent-saga/core';

/** An outbox row a relay claimed, to publish. */
export interface ClaimedOutboxRow {
  readonly id: string;
  readonly job_id: string;
  readonly payload: unknown;
  /** Age of the row in ms, on the database clock. */
  readonly age_ms: number;
}

/**
 * Claims up to `limit` due, unpublished `execute` rows for `leaseMs`, in one statement that commits on its
 * own (no transaction stays open while the relay talks to Redis):
 *
 * ```sql
 * UPDATE outbox SET relay_after = now() + $lease
 *  WHERE id IN (SELECT id FROM outbox
 *                WHERE topic = 'execute' AND published_at IS NULL AND relay_after <= now()
 *                ORDER BY id LIMIT $limit FOR UPDATE SKIP LOCKED)
 * RETURNING id, job_id, payload, age_ms;
 * ```
 *
 * Moving `relay_after` past the lease is the claim: other relays skip the rows until it ends (and
 * `FOR UPDATE SKIP LOCKED` keeps two relays claiming at the same instant off each other's rows). A relay
 * that dies holding a claim leaves the rows to be claimed again once the lease ends. Returned in id order.
 */
export async function claimOutboxRows(
  db: SagaDb,
  p: { readonly limit: number; readonly leaseMs: number },
): Promise<readonly ClaimedOutboxRow[]> {
  const r = await sql<ClaimedOutboxRow>`
    UPDATE outbox SET relay_after = now() + make_interval(secs => ${p.leaseMs}::float8 / 1000)
     WHERE id IN (SELECT id FROM outbox
                   WHERE topic = ${EXECUTE_TOPIC} AND published_at IS NULL AND relay_after <= now()
                   ORDER BY id LIMIT ${p.limit} FOR UPDATE SKIP LOCKED)
    RETURNING id, job_id, payload, (extract(epoch from now() - created_at) * 1000)::float8 AS age_ms`.execute(
    db,
  );
  return [...r.rows].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
}

/**
 * Marks claimed rows published once their jobs are in BullMQ. `published_at IS NULL`: a row already marked
 * (by the executor's claim, or by a relay whose lease this one outlived) keeps its first mark.
 */
export async function markOutboxPublished(db: SagaDb, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('outbox')
    .set({ published_at: sql<Date>`now()` })
    .where('id', 'in', ids)
    .where('published_at', 'is', null)
    .execute();
}

/**
 * Gives back claimed rows whose publish failed (Redis down), so the next sweep tries them again instead of
 * waiting out the lease. Best effort: if this fails too, the lease ends by itself.
 */
export async function releaseOutboxClaim(db: SagaDb, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('outbox')
    .set({ relay_after: sql<Date>`now()` })
    .where('id', 'in', ids)
    .where('published_at', 'is', null)
    .execute();
}
