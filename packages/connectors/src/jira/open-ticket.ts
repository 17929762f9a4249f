import { Audience, ClientError, defineTool, ToolClass } from '@agent-saga/core';
import { z } from 'zod';
import { findLabelledEffect } from './find-labelled-effect.js';
import { addIssueLabel, getIssue } from './issue-endpoints.js';
import type { JiraConnection } from './jira-connection.js';
import { issueKeySchema } from './jira-wire.js';
import { sagaLabel } from './saga-label.js';
import { transitionToStatus } from './transition-to-status.js';

export const openTicketArgs = z.object({ ticket: issueKeySchema });

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * `open_ticket`: moves a draft (`JIRA_DRAFT_STATUS`) into the team's queue (`JIRA_OPEN_STATUS`).
 *
 * Compensatable, not reversible: once the ticket is in the queue the team may have seen it, picked it up or
 * been notified, so moving it back to the draft status would not erase anything; the honest undo is a
 * visible `close_ticket` with a reason. (A rolled-back run then also deletes the draft through
 * `create_ticket_draft`'s own compensation.)
 *
 * Keyed like `close_ticket`: label `saga-<key>` first, then the transition; the effect is "labelled AND no
 * longer in the draft status", confirmed live by the lookup. A ticket already in the open status is a no-op
 * (labelled only); one in any other status (in progress, done) is refused: it is not a draft.
 */
export function openTicketTool(conn: JiraConnection) {
  const { draftStatus, openStatus } = conn.config;
  return defineTool({
    name: 'open_ticket',
    description: 'Opens a ticket draft made by create_ticket_draft, so people start working on it.',
    class: ToolClass.COMPENSATABLE,
    version: 1,
    args: openTicketArgs,
    identity: ['ticket'],
    audience: [Audience.SUPPORT_TEAM],
    compensate: (args) => ({
      tool: 'close_ticket',
      args: { ticket: args.ticket, reason: 'rolled back by run' },
    }),
    async execute(args, ctx) {
      const issue = await getIssue(conn, args.ticket, ctx);
      const status = issue.fields.status.name;
      const isOpen = same(status, openStatus);
      if (!isOpen && !same(status, draftStatus)) {
        throw new ClientError(`jira: ${issue.key} is in ${status}, not a draft`, {
          vendor: 'jira',
          vendorCode: 'not_a_draft',
        });
      }
      const label = sagaLabel(ctx.idempotencyKey);
      if (!issue.fields.labels.includes(label)) await addIssueLabel(conn, issue.key, label, ctx);
      if (!isOpen) await transitionToStatus(conn, issue.key, { name: openStatus }, undefined, ctx);
      return {
        externalRef: issue.key,
        result: { key: issue.key, status: openStatus, transitioned: !isOpen },
      };
    },
    lookup: (key, ctx) =>
      findLabelledEffect(conn, key, ctx, async (found) => {
        const live = await getIssue(conn, found.key, ctx);
        return same(live.fields.status.name, draftStatus)
          ? null
          : { key: live.key, status: live.fields.status.name };
      }),
    lookupLagMs: conn.config.lookupLagMs,
    commitHorizonMs: conn.config.commitHorizonMs,
  });
}
