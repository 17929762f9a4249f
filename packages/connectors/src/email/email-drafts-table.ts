import type { ColumnType, Generated, Kysely, Selectable } from 'kysely';
import type { Database, SagaDb } from '@agent-saga/core';

/**
 * State of an email draft the harness keeps itself (`email_drafts`). A status is defined once, here; the
 * connectors' migration `0001_email_drafts` spells its CHECK list as it stood, and core's `migrate.test.ts`
 * checks the two agree.
 */
export const EmailDraftStatus = {
  /** Stored, not sent; nobody outside the harness has seen it. */
  DRAFT: 'draft',
  /** Deleted by `delete_email_draft`; the row stays so the deletion can be found by its key. */
  DELETED: 'deleted',
} as const;
export type EmailDraftStatus = (typeof EmailDraftStatus)[keyof typeof EmailDraftStatus];

/**
 * Email drafts kept by the harness, owned by the connectors' migration list (`migrations/`): the email
 * provider has no drafts, so `create_email_draft` writes here under its step key and `delete_email_draft`
 * marks the row deleted under its own key (`deletion_key`), so both effects can be found by key.
 */
export interface EmailDraftsTable {
  draft_id: string;
  tenant_id: string;
  idempotency_key: string;
  to: string;
  template: string;
  vars: ColumnType<Record<string, unknown>, string, string>;
  status: EmailDraftStatus;
  deletion_key: string | null;
  created_at: Generated<Date>;
  deleted_at: Date | null;
}

export type EmailDraftRow = Selectable<EmailDraftsTable>;

/** The saga database seen with the connectors' own table added; core's `Database` does not know it. */
export type EmailDraftsDb = Kysely<Database & { email_drafts: EmailDraftsTable }>;

/** `db`, typed with `email_drafts` (the same pool and connection: kysely's `withTables`). */
export function withEmailDrafts(db: SagaDb): EmailDraftsDb {
  return db.withTables<{ email_drafts: EmailDraftsTable }>();
}
