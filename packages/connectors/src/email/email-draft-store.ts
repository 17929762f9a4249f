import { randomBytes } from 'node:crypto';
import { ClientError, type SagaDb } from '@agent-saga/core';
import { EmailDraftStatus, withEmailDrafts, type EmailDraftRow } from './email-drafts-table.js';

/**
 * The SQL of the harness's own email drafts (table `email_drafts`, owned by the connectors' migration list,
 * `migrations/`), one function per operation. Every function filters by tenant: a key or draft id of another
 * tenant is not there.
 */

/** `edr_` and 24 hex characters. */
export const DRAFT_ID = /^edr_[0-9a-f]{24}$/;

export interface NewDraft {
  readonly tenantId: string;
  readonly key: string;
  readonly to: string;
  readonly template: string;
  readonly vars: Readonly<Record<string, unknown>>;
}

/**
 * Inserts the draft of step `key`, or keeps the one already there (`ON CONFLICT (idempotency_key) DO
 * NOTHING`): a re-sent create is one draft. Returns the row either way.
 */
export async function insertDraft(db: SagaDb, draft: NewDraft): Promise<EmailDraftRow> {
  await withEmailDrafts(db)
    .insertInto('email_drafts')
    .values({
      draft_id: `edr_${randomBytes(12).toString('hex')}`,
      tenant_id: draft.tenantId,
      idempotency_key: draft.key,
      to: draft.to,
      template: draft.template,
      vars: JSON.stringify(draft.vars),
      status: EmailDraftStatus.DRAFT,
    })
    .onConflict((oc) => oc.column('idempotency_key').doNothing())
    .execute();
  const row = await findDraftByKey(db, draft.tenantId, draft.key);
  // Only another tenant can hold the key (keys are derived from run ids, which are per tenant): refuse.
  if (row === undefined) {
    throw new ClientError('email draft: this idempotency key belongs to another tenant', {
      vendorCode: 'key_taken',
    });
  }
  return row;
}

export async function findDraftByKey(
  db: SagaDb,
  tenantId: string,
  key: string,
): Promise<EmailDraftRow | undefined> {
  return withEmailDrafts(db)
    .selectFrom('email_drafts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

/** The draft deleted under `deletionKey`, if any. */
export async function findDeletionByKey(
  db: SagaDb,
  tenantId: string,
  deletionKey: string,
): Promise<EmailDraftRow | undefined> {
  return withEmailDrafts(db)
    .selectFrom('email_drafts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('deletion_key', '=', deletionKey)
    .executeTakeFirst();
}

/**
 * Marks a live draft deleted under `deletionKey`: compare-and-set on `status = 'draft'`. A draft already
 * deleted (by this key or another) is returned as it is: deleting twice is one deletion. A draft that does
 * not exist is a definitive refusal.
 */
export async function markDraftDeleted(
  db: SagaDb,
  input: { readonly tenantId: string; readonly draftId: string; readonly deletionKey: string },
): Promise<{ readonly row: EmailDraftRow; readonly alreadyDeleted: boolean }> {
  const updated = await withEmailDrafts(db)
    .updateTable('email_drafts')
    .set({ status: EmailDraftStatus.DELETED, deleted_at: new Date(), deletion_key: input.deletionKey })
    .where('tenant_id', '=', input.tenantId)
    .where('draft_id', '=', input.draftId)
    .where('status', '=', EmailDraftStatus.DRAFT)
    .returningAll()
    .executeTakeFirst();
  if (updated !== undefined) return { row: updated, alreadyDeleted: false };
  const existing = await withEmailDrafts(db)
    .selectFrom('email_drafts')
    .selectAll()
    .where('tenant_id', '=', input.tenantId)
    .where('draft_id', '=', input.draftId)
    .executeTakeFirst();
  if (existing === undefined) {
    throw new ClientError(`email draft ${input.draftId} does not exist`, {
      status: 404,
      vendorCode: 'not_found',
    });
  }
  return { row: existing, alreadyDeleted: true };
}
