import { sql, type Kysely } from 'kysely';

/**
 * Email drafts kept by the harness itself (Resend has no drafts). `create_email_draft` inserts under its
 * step key (`idempotency_key UNIQUE`: a re-sent create is `ON CONFLICT DO NOTHING`, one draft per key);
 * `delete_email_draft` marks the row deleted under its own key (`deletion_key UNIQUE`), so the deletion,
 * too, is found by key. Rows are never removed: a deleted draft is the evidence of its deletion.
 *
 * `"to"` is quoted: TO is a reserved word in Postgres (Kysely quotes every identifier it writes).
 *
 * Frozen (issue 11): the statuses are spelled out as they stood, no longer derived from `EmailDraftStatus`.
 * The table belongs to the connectors, whose own migration list (`packages/connectors/src/migrations`) owns
 * it from now on; this migration stays in core's list as it is, forever: deployed databases have it
 * recorded (Kysely refuses a list that lost a migration it ran), and fresh ones keep getting the table here.
 * A change to `email_drafts` is a migration of the connectors' list, never of core's.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE email_drafts (
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
  await sql`CREATE INDEX email_drafts_tenant_created ON email_drafts (tenant_id, created_at DESC)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE email_drafts`.execute(db);
}
