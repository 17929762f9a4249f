import type { AnyTool, SagaDb } from '@agent-saga/core';
import { createEmailDraftTool } from './create-email-draft.js';
import { deleteEmailDraftTool } from './delete-email-draft.js';
import type { EmailConfig } from './email-config.js';
import type { EmailTemplates } from './email-templates.js';
import { sendEmailTool } from './send-email.js';

/** What the email tools need besides config: the saga database (drafts live in `email_drafts`). */
export interface EmailToolDeps {
  /** A handle on the saga schema, e.g. `createDb(config.db)`; the caller owns and closes it. */
  readonly db: SagaDb;
}

/**
 * The email tools: `send_email`, `create_email_draft` (→ `delete_email_draft`), `delete_email_draft`.
 * `templates` is the registry they render from, e.g. `DEFAULT_EMAIL_TEMPLATES` or a bigger object
 * spreading it. No tool declares a `commitHorizonMs` (the default, its timeout, holds): the email API
 * dedupes a re-send by its idempotency key, so a "not found" believed before a held send commits cannot
 * send twice; the drafts live in the saga's own database.
 */
export function createEmailTools(
  config: EmailConfig,
  templates: EmailTemplates,
  deps: EmailToolDeps,
): readonly AnyTool[] {
  return [
    sendEmailTool(config, templates),
    createEmailDraftTool(deps.db, templates),
    deleteEmailDraftTool(deps.db),
  ];
}
