import { Audience, defineTool, ref, ToolClass, type SagaDb } from '@agent-saga/core';
import type { EmailDraftRow } from './email-drafts-table.js';
import { renderEmail, type EmailTemplates } from './email-templates.js';
import { findDraftByKey, insertDraft } from './email-draft-store.js';
import { emailArgs } from './send-email.js';

function draftResult(row: EmailDraftRow, subject: string | undefined) {
  return {
    draftId: row.draft_id,
    to: row.to,
    template: row.template,
    status: row.status,
    ...(subject !== undefined ? { subject } : {}),
  };
}

/**
 * `create_email_draft`: a rendered-and-checked email kept by the harness itself (Resend has no drafts), in
 * `email_drafts` under the step key. Reversible: deleting a draft nobody outside has seen leaves no trace.
 * Postgres is consistent, so the lookup is exact and its lag 0; a re-sent create keeps the first draft.
 */
export function createEmailDraftTool(db: SagaDb, templates: EmailTemplates) {
  return defineTool({
    name: 'create_email_draft',
    description:
      'Writes an email to a customer as a draft, not sent; a later send_email sends it. Deleted if the run is undone.',
    class: ToolClass.REVERSIBLE,
    version: 1,
    args: emailArgs(templates),
    identity: ['to', 'template'],
    // One draft per email, and a run may send a customer two emails of one template (`send_email`).
    repeatable: true,
    // As send_email: the recipient and the variables, and the subject rendered from them.
    personal: ['to', 'vars'],
    personalResult: ['to', 'subject'],
    audience: [Audience.AGENT],
    compensate: (_args, key) => ({ tool: 'delete_email_draft', args: { draft: ref(key) } }),
    async execute(args, ctx) {
      // Rendered now so a draft that could never be sent is refused at once; the text is not stored.
      const rendered = renderEmail(templates, args.template, args.vars);
      const row = await insertDraft(db, {
        tenantId: ctx.tenantId,
        key: ctx.idempotencyKey,
        to: args.to,
        template: args.template,
        vars: args.vars,
      });
      return { externalRef: row.draft_id, result: draftResult(row, rendered.subject) };
    },
    async lookup(key, ctx) {
      const row = await findDraftByKey(db, ctx.tenantId, key);
      return row === undefined ? null : { externalRef: row.draft_id, result: draftResult(row, undefined) };
    },
    lookupLagMs: 0,
  });
}
