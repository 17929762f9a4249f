import { sql, type Kysely } from 'kysely';

/**
 * Correction sends that survive a crash (issue 9, item 4).
 *
 * - `corrections.status` gains `sending` (a send holds a lease and may be under way) and `unknown` (it may
 *   have gone out; settled only by the email lookup by key). The list is spelled out here, as it stands at
 *   this migration, so what this migration creates never changes with the code.
 * - `version`: the message's version, 1 as queued, +1 per edit. Each version is sent under its own key, so an
 *   unknown send of version 1 can never be repeated as version 2 under the same key.
 * - `lease_owner`, `lease_until`: the sender's lease, on the database's clock, written with the key in the
 *   transaction that moves the row to `sending`.
 * - `send_started_at`: when the current send started (database clock): the lookup lag counts from it.
 * - `corrections_sends_unsettled` serves the reconciler's sweep of sends to settle without touching others.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE corrections DROP CONSTRAINT corrections_status_check`.execute(db);
  await sql`
    ALTER TABLE corrections
      ADD COLUMN version         integer NOT NULL DEFAULT 1 CHECK (version >= 1),
      ADD COLUMN lease_owner     text,
      ADD COLUMN lease_until     timestamptz,
      ADD COLUMN send_started_at timestamptz,
      ADD CONSTRAINT corrections_status_check
        CHECK (status IN ('open', 'sending', 'unknown', 'sent', 'dismissed'))`.execute(db);
  await sql`
    CREATE INDEX corrections_sends_unsettled ON corrections (send_started_at)
     WHERE status IN ('sending', 'unknown')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX corrections_sends_unsettled`.execute(db);
  await sql`ALTER TABLE corrections DROP CONSTRAINT corrections_status_check`.execute(db);
  // A send not settled goes back to open with its key: sent again, the same key replays, never doubles.
  await sql`UPDATE corrections SET status = 'open' WHERE status IN ('sending', 'unknown')`.execute(db);
  await sql`
    ALTER TABLE corrections
      DROP COLUMN send_started_at, DROP COLUMN lease_until, DROP COLUMN lease_owner, DROP COLUMN version,
      ADD CONSTRAINT corrections_status_check CHECK (status IN ('open', 'sent', 'dismissed'))`.execute(db);
}
