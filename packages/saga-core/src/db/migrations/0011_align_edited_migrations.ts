import { sql, type Kysely } from 'kysely';

/**
 * Brings a database migrated by an earlier version of an edited migration to the schema a fresh database
 * gets (issue 11: "one version, two schemas"). Idempotent: on a fresh database, and on every database
 * migrated since the edit, it changes nothing.
 *
 * What differed, found from `git log -p --follow` of every committed migration and of `statuses.ts`:
 *
 * - 0005 gained `outbox.relay_after` after it had been committed (b8df75e). A database that ran the first
 *   0005 (d562f6c) has no such column. This migration adds it as 0005 now does. It lands in the same place
 *   (the last column of `outbox`: no migration since has added one), so both paths give the same schema;
 *   a test migrates that older shape and compares it with a fresh one. Rows already there get the time of
 *   this migration as `relay_after`: the relays may publish them at once, as they did before the column.
 * - Nothing else. 0001, 0002 and 0004 were edited only to derive their lists through a helper (b64a923),
 *   with the same SQL as a result, and 0005 once more to spell `'resolved'` through `ReviewStatus` (the same
 *   value). Two status objects grew after a migration had read them: `StepEventKind` (read by 0001 and
 *   0004, but every database has 0005's constraint, which already had today's seven kinds) and
 *   `CorrectionStatus` (read by 0005, whose constraint 0006 replaces with a list of its own). Every other
 *   list a committed migration read is unchanged since it was first committed. So every CHECK list and
 *   partial-index predicate is already the same on every database, and this migration leaves them alone.
 *
 * `ADD COLUMN IF NOT EXISTS` is not the habit of swallowing "already exists" to survive a race: migrations
 * run one at a time under the migrator's lock. It states that exactly two shapes of `outbox` exist in the
 * field and maps the older one onto the newer. No `down`: the column belongs to 0005, whose `down` drops it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE outbox ADD COLUMN IF NOT EXISTS relay_after timestamptz NOT NULL DEFAULT now()`.execute(
    db,
  );
}
