import { sql } from 'kysely';
import type { SagaDb } from '../db/connect.js';
import { ApprovalKind, ApprovalStatus } from '../review/approvals/approval-status.js';
import { Audience } from '../review/corrections/audience.js';
import { CorrectionStatus } from '../review/corrections/correction-status.js';
import { ReviewStatus } from '../review/cases/case-status.js';
import { valuesOf } from '../util/values-of.js';
import type { Backlog } from './read-backlog-gauges.js';

/** The pending approvals of one kind. */
export interface PendingApprovals extends Backlog {
  /** Seconds until the soonest of them expires (negative: past due, not yet swept); null when none. */
  readonly nextExpirySeconds: number | null;
}

/**
 * Pending approvals by kind (pivot, step): how many, the age of the oldest, and the time left before the
 * soonest expires (a card hold does not wait). Reads through the partial index `approvals_pending`.
 */
export async function readPendingApprovals(db: SagaDb): Promise<ReadonlyMap<ApprovalKind, PendingApprovals>> {
  const r = await sql<{ kind: ApprovalKind; n: number; oldest: number | null; next_expiry: number | null }>`
    SELECT kind,
           count(*)::float8 AS n,
           extract(epoch FROM now() - min(created_at))::float8 AS oldest,
           extract(epoch FROM min(expires_at) - now())::float8 AS next_expiry
      FROM approvals
     WHERE status = ${sql.lit(ApprovalStatus.PENDING)}
     GROUP BY kind`.execute(db);
  const pending = new Map<ApprovalKind, PendingApprovals>(
    valuesOf(ApprovalKind).map((k) => [k, { count: 0, oldestAgeSeconds: 0, nextExpirySeconds: null }]),
  );
  for (const row of r.rows)
    pending.set(row.kind, {
      count: row.n,
      oldestAgeSeconds: Math.max(0, row.oldest ?? 0),
      nextExpirySeconds: row.next_expiry,
    });
  return pending;
}

/** What waits for a person besides approvals. */
export interface OpenReviews {
  /** Open manual-intervention cases. */
  readonly cases: Backlog;
  /** Open corrections, by whether the customer is among their audience (`customer`) or not (`internal`). */
  readonly corrections: ReadonlyMap<'customer' | 'internal', number>;
}

/**
 * Open cases (and the age of the oldest) and open corrections. Neither table has an index on its status:
 * both hold one row per thing a person must look at, so they stay small, and the read is one pass each.
 */
export async function readOpenReviews(db: SagaDb): Promise<OpenReviews> {
  const cases = await sql<{ n: number; oldest: number | null }>`
    SELECT count(*)::float8 AS n, extract(epoch FROM now() - min(created_at))::float8 AS oldest
      FROM cases
     WHERE status = ${ReviewStatus.OPEN}`.execute(db);
  const corrections = await sql<{ customer: boolean; n: number }>`
    SELECT (${Audience.CUSTOMER} = ANY (audience)) AS customer, count(*)::float8 AS n
      FROM corrections
     WHERE status = ${CorrectionStatus.OPEN}
     GROUP BY 1`.execute(db);
  const byAudience = new Map<'customer' | 'internal', number>([
    ['customer', 0],
    ['internal', 0],
  ]);
  for (const row of corrections.rows) byAudience.set(row.customer ? 'customer' : 'internal', row.n);
  const c = cases.rows[0];
  return {
    cases: { count: c?.n ?? 0, oldestAgeSeconds: Math.max(0, c?.oldest ?? 0) },
    corrections: byAudience,
  };
}
