import { Audience, defineTool, ToolClass, type SagaDb } from '@agent-saga/core';
import { z } from 'zod';
import { DRAFT_ID, findDeletionByKey, markDraftDeleted } from './email-draft-store.js';

export const deleteEmailDraftArgs = z.object({
  /** The draft id; a `{ $ref }` in a stored compensation is resolved by the compensator before the call. */
  draft: z.string().regex(DRAFT_ID, 'an email draft id (edr_…)'),
});

/**
 * `delete_email_draft`: the compensation of `create_email_draft`. Keyed by the column `deletion_key`: the
 * row is marked deleted under this call's key in one compare-and-set, so the lookup finds the deletion by
 * key. Irreversible in its own right (there is no undelete tool).
 */
export function deleteEmailDraftTool(db: SagaDb) {
  return defineTool({
    name: 'delete_email_draft',
    description: 'Deletes an email draft that was never sent (the undo of create_email_draft).',
    class: ToolClass.IRREVERSIBLE,
    version: 1,
    deletes: true,
    args: deleteEmailDraftArgs,
    audience: [Audience.AGENT],
    async execute(args, ctx) {
      const { row, alreadyDeleted } = await markDraftDeleted(db, {
        tenantId: ctx.tenantId,
        draftId: args.draft,
        deletionKey: ctx.idempotencyKey,
      });
      return {
        externalRef: row.draft_id,
        result: { draftId: row.draft_id, status: row.status, alreadyDeleted },
      };
    },
    async lookup(key, ctx) {
      const row = await findDeletionByKey(db, ctx.tenantId, key);
      return row === undefined
        ? null
        : { externalRef: row.draft_id, result: { draftId: row.draft_id, status: row.status } };
    },
    lookupLagMs: 0,
  });
}
