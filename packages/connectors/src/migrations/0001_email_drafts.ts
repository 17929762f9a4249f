import { sql, type Kysely } from 'kysely';

/**
 * `email_drafts`, the email connector's own table (see `email/email-draft-store.ts`), now owned by this
 * list: a change to it is a new migration here (`0002_…`), never one of core's.
 *
 * Why `IF NOT EXISTS`: core's migration 0002 created this table before the connectors had a list, and it
 * stays in core's list forever (deployed databases have it recorded, and Kysely refuses a list that lost a
 * migration it ran), so on every schema `agent-saga migrate` has touched the table is already there, in
 * exactly this shape, and this migration only records that the connectors own it. It creates the table only
 * on a schema core has not migrated. It is not the habit of swallowing "already exists" to survive a race:
 * the migrator runs it under its lock, and the schema dump test (`test/schema/`) checks that a freshly
 * migrated schema has the shape written here. The statuses are spelled out (`EmailDraftStatus` as it
 * stands): a migration imports nothing live.
 *
 * No `down`: on a deployed schema the table is core's 0002's, which this migration did not create.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE IF NOT EXISTS email_drafts (
      draft_id        text PRIMARY KEY,
      tenant_id       text NOT NULL,
      idempotency_key text NOT NULL UNIQUE,
      "to"            text NOT NULL,
      template        text NOT NULL,
      vars            jsonb NOT NULL DEFAULT '{}'::jsonb,
      status          text NOT NULL CHECK (status IN ('draft', 'deleted')),
      deletion_key    text UNIQUE,
      created_at      timestamptz NOT NULL DEFAULT now(),
      deleted_at      timestamptz,
      -- A deleted draft says when and under which key; a live one has neither.
      CHECK ((status = 'deleted') = (deleted_at IS NOT NULL AND deletion_key IS NOT NULL))
    )`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS email_drafts_tenant_created ON email_drafts (tenant_id, created_at DESC)`.execute(
    db,
  );
}
