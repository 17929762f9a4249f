import { sql, type RawBuilder } from 'kysely';

/** What {@link nextLookupAt} needs of a "not found" that could not be believed yet (verdict `too-early`). */
export interface TooEarlyLookup {
  /** When the attempt was sent (a timestamp the database wrote: `last_attempt_at`, `send_started_at`). */
  readonly lastAttemptAt: Date;
  /** When a "not found" becomes evidence of absence (the verdict's `believableAt`). */
  readonly believableAt: Date;
  /** The tool's search lag: how long after a write its lookup can show it. */
  readonly lookupLagMs: number;
  /** The shortest pause between two looks (the caller's LOOKUP_RECHECK_MS). */
  readonly floorMs: number;
}

/**
 * When to look again after a "not found" that cannot be believed yet, by the database's clock:
 *
 * ```sql
 * least($believableAt, now() + greatest($floor, $lag, now() - $lastAttemptAt))
 * ```
 *
 * Why not simply at `believableAt`: before the tool's commit horizon a "not found" proves nothing, but a
 * "found" is believed at once, and most unknown outcomes are effects that did happen (an answer lost after
 * the vendor committed). A look made within the search lag of the send misses such an effect; waiting for
 * the horizon to look again (two minutes for a Jira create, `JIRA_COMMIT_HORIZON_MS`) keeps a ticket that
 * exists UNKNOWN all that time, and an agent or an unwind waits on it (seen in `pnpm soak
 * --execute-inline`, where the API records the unknown outcome and the reconciler looks within the lag).
 * So the next look comes once the search can show what the last attempt made (the lag after this look),
 * then at doubling ages of the attempt (each pause as long as the time since the send), never sooner than
 * `floorMs` apart, and the last at `believableAt`, the look whose "not found" is believed. A horizon of H
 * and a lag of L cost about log2(H / L) extra lookups.
 */
export function nextLookupAt(l: TooEarlyLookup): RawBuilder<Date> {
  const minSecs = Math.max(l.floorMs, l.lookupLagMs) / 1000;
  return sql<Date>`least(${l.believableAt}::timestamptz,
    now() + greatest(make_interval(secs => ${minSecs}::float8), now() - ${l.lastAttemptAt}::timestamptz))`;
}
