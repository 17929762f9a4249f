import { Audience, defineTool, ToolClass } from '@agent-saga/core';
import { z } from 'zod';
import { adfFromText } from './adf.js';
import { findLabelledEffect } from './find-labelled-effect.js';
import { addIssueLabel, getIssue } from './issue-endpoints.js';
import type { JiraConnection } from './jira-connection.js';
import { DONE_CATEGORY, issueKeySchema } from './jira-wire.js';
import { sagaLabel } from './saga-label.js';
import { transitionToStatus } from './transition-to-status.js';

export const closeTicketArgs = z.object({
  /** The issue key; a `{ $ref }` in a stored compensation is resolved by the compensator before the call. */
  ticket: issueKeySchema,
  reason: z.string().trim().min(1).max(5_000),
});

/**
 * `close_ticket`: moves the ticket along the transition whose target's status category is `done` (never a
 * transition id: those differ between workflows), adding the reason as an ADF comment in the same call. A
 * ticket already in a done status is left alone (no second transition, no comment). Called as a
 * compensation, the comment also says why the run was unwound (`ctx.unwindReason`): the stored `reason`
 * was written with the forward call, before anyone knew.
 *
 * Keyed by label: the call first adds `saga-<key>` to the ticket (a set, so re-sending is harmless), then
 * transitions. The effect is "labelled AND in a done status": the lookup searches the label and confirms
 * the status live, so a crash between label and transition reads as not done, and a re-send finishes it.
 * A re-send after the transition committed finds the ticket done and does nothing: one comment.
 *
 * Irreversible in its own right (it is the compensation of `create_ticket`; there is no `reopen` tool): a
 * model calling it directly is held for approval.
 */
export function closeTicketTool(conn: JiraConnection) {
  return defineTool({
    name: 'close_ticket',
    description: 'Closes a Jira ticket with a comment saying why (the undo of create_ticket).',
    class: ToolClass.IRREVERSIBLE,
    version: 1,
    args: closeTicketArgs,
    // The closing comment is free text; a person or a model closing a ticket by hand writes about the
    // customer. The harness's own "rolled back by run" is hidden from agents too: the rule is by field.
    personal: ['reason'],
    audience: [Audience.SUPPORT_TEAM],
    async execute(args, ctx) {
      const issue = await getIssue(conn, args.ticket, ctx);
      const label = sagaLabel(ctx.idempotencyKey);
      if (!issue.fields.labels.includes(label)) await addIssueLabel(conn, issue.key, label, ctx);
      if (issue.fields.status.statusCategory.key === DONE_CATEGORY) {
        return {
          externalRef: issue.key,
          result: { key: issue.key, status: issue.fields.status.name, transitioned: false },
        };
      }
      const comment = adfFromText(closingComment(args.reason, ctx.unwindReason, ctx.idempotencyKey));
      const transition = await transitionToStatus(conn, issue.key, { category: DONE_CATEGORY }, comment, ctx);
      return {
        externalRef: issue.key,
        result: { key: issue.key, status: transition.to.name, transitioned: true },
      };
    },
    lookup: (key, ctx) =>
      findLabelledEffect(conn, key, ctx, async (found) => {
        const live = await getIssue(conn, found.key, ctx);
        return live.fields.status.statusCategory.key === DONE_CATEGORY
          ? { key: live.key, status: live.fields.status.name }
          : null;
      }),
    lookupLagMs: conn.config.lookupLagMs,
    commitHorizonMs: conn.config.commitHorizonMs,
  });
}

/** The closing comment: the stored reason, the run's unwind reason when there is one, the harness key. */
function closingComment(reason: string, unwindReason: string | undefined, key: string): string {
  const why = unwindReason?.trim() ? `\nUnwind reason: ${unwindReason.trim()}` : '';
  return `${reason}${why}\n(agent-saga step ${key})`;
}
