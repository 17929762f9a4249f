import { sql } from 'kysely';
import type { SagaTrx } from '../../db/connect.js';

/** A hold staged before the pivot whose window has ended (from the approval's evidence, `staged[]`). */
export interface LapsedHold {
  readonly stepIdx: number | null;
  readonly tool: string | null;
  readonly holdEndsAt: string;
}

/**
 * Whether an approved pivot may still release a commit step, read on the database clock.
 * - `open`: the approval's deadline and every staged hold's window are still ahead.
 * - `passed`: one of them is behind (`deadlinePassed`, `lapsedHolds`), seen at `now`: releasing the step
 *   could send a capture against a hold that no longer holds, or an email for a refund that cannot happen.
 */
export type CommitDeadline =
  | { readonly kind: 'open' }
  | {
      readonly kind: 'passed';
      readonly deadline: Date;
      readonly now: Date;
      readonly deadlinePassed: boolean;
      readonly lapsedHolds: readonly LapsedHold[];
    };

/**
 * Checks, in the caller's transaction and with `now()` of the database (the clock every lease and deadline
 * is read on), that an approved pivot is still within what the person approved:
 *
 * ```sql
 * SELECT expires_at, now(), expires_at <= now() AS deadline_passed,
 *        (holds in evidence->'staged' whose holdEndsAt <= now()) AS lapsed_holds
 *   FROM approvals WHERE id = $approval;
 * ```
 *
 * The approval's `expires_at` was set at staging to the earlier of its TTL and the end of every hold staged
 * before it (`stagePivot`'s deadline); each hold's own end is kept in the evidence the person read
 * (`staged[].holdEndsAt`), so both are checked here without the tool registry, and the evidence of a stop
 * names which one passed.
 */
export async function checkCommitDeadline(trx: SagaTrx, approvalId: string): Promise<CommitDeadline> {
  const r = await sql<{
    expires_at: Date;
    now: Date;
    deadline_passed: boolean;
    lapsed_holds: LapsedHold[];
  }>`
    SELECT a.expires_at, now() AS now, a.expires_at <= now() AS deadline_passed,
           coalesce((
             SELECT jsonb_agg(jsonb_build_object(
                      'stepIdx', h->'stepIdx', 'tool', h->'tool', 'holdEndsAt', h->'holdEndsAt')
                    ORDER BY (h->>'holdEndsAt')::timestamptz)
               FROM jsonb_array_elements(
                      CASE WHEN jsonb_typeof(a.evidence->'staged') = 'array' THEN a.evidence->'staged'
                           ELSE '[]'::jsonb END) AS h
              WHERE jsonb_typeof(h->'holdEndsAt') = 'string' AND (h->>'holdEndsAt')::timestamptz <= now()
           ), '[]'::jsonb) AS lapsed_holds
      FROM approvals a
     WHERE a.id = ${approvalId}`.execute(trx);
  const row = r.rows[0];
  if (!row) throw new Error(`approval ${approvalId} not found`);
  if (!row.deadline_passed && row.lapsed_holds.length === 0) return { kind: 'open' };
  return {
    kind: 'passed',
    deadline: row.expires_at,
    now: row.now,
    deadlinePassed: row.deadline_passed,
    lapsedHolds: row.lapsed_holds,
  };
}
