import { Audience, ClientError, defineTool, ToolClass } from '@agent-saga/core';
import { z } from 'zod';
import { deleteIssue, getIssue } from './issue-endpoints.js';
import type { JiraConnection } from './jira-connection.js';
import { issueKeySchema } from './jira-wire.js';

export const deleteTicketArgs = z.object({ ticket: issueKeySchema });

/**
 * `delete_ticket`: deletes the issue (the compensation of `create_ticket_draft`). Irreversible in its own
 * right.
 *
 * Keyed how: it is not, and cannot be. A deletion leaves nothing in Jira to carry a key: a label goes with
 * the issue, and the JQL index drops the issue within its lag, so a label written just before the delete is
 * never reliably searchable. Instead the call is idempotent by the resource's state: a 404 means the issue
 * is already gone, which is the goal, so `execute` reports success (`alreadyGone: true`) — including for a
 * key that never existed, which a compensation cannot tell apart. The lookup therefore checks the state the
 * call was meant to reach, from its stored arguments (`ctx.args.ticket`): the issue is gone (404 on a direct
 * read, which is consistent at once, so lag 0) → found; it still exists → null, and a re-send converges. The
 * one thing lost is the distinction "deleted by this step" versus "already gone", which a 404 cannot carry.
 */
export function deleteTicketTool(conn: JiraConnection) {
  return defineTool({
    name: 'delete_ticket',
    description: 'Deletes a Jira ticket draft (the undo of create_ticket_draft).',
    class: ToolClass.IRREVERSIBLE,
    version: 1,
    deletes: true,
    args: deleteTicketArgs,
    audience: [Audience.AGENT],
    async execute(args, ctx) {
      try {
        await deleteIssue(conn, args.ticket, ctx);
        return { externalRef: args.ticket, result: { key: args.ticket, deleted: true, alreadyGone: false } };
      } catch (error) {
        if (error instanceof ClientError && error.details.status === 404) {
          return { externalRef: args.ticket, result: { key: args.ticket, deleted: true, alreadyGone: true } };
        }
        throw error;
      }
    },
    async lookup(_key, ctx) {
      const parsed = deleteTicketArgs.safeParse(ctx.args);
      if (!parsed.success) return null;
      const ticket = parsed.data.ticket;
      try {
        await getIssue(conn, ticket, ctx);
        return null;
      } catch (error) {
        if (error instanceof ClientError && error.details.status === 404)
          return { externalRef: ticket, result: { key: ticket, deleted: true } };
        throw error;
      }
    },
    lookupLagMs: 0,
    commitHorizonMs: conn.config.commitHorizonMs,
  });
}
