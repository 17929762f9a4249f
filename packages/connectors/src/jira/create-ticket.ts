import { Audience, defineTool, ref, ToolClass } from '@agent-saga/core';
import { z } from 'zod';
import { adfFromText } from './adf.js';
import { findLabelledEffect } from './find-labelled-effect.js';
import { createIssue } from './issue-endpoints.js';
import type { JiraConnection } from './jira-connection.js';
import { sagaLabel } from './saga-label.js';

/** Arguments of `create_ticket` and `create_ticket_draft`. */
export const ticketArgs = z.object({
  summary: z.string().trim().min(1).max(255),
  orderId: z.string().trim().min(1).max(100),
  description: z.string().max(30_000).optional(),
});
export type TicketArgs = z.infer<typeof ticketArgs>;

/** The description document: the caller's text, then the order it is about. */
export function ticketDescription(args: TicketArgs) {
  return adfFromText(`${args.description ?? ''}\nOrder: ${args.orderId}`);
}

/**
 * `create_ticket`: a ticket in the team's queue. Jira has no idempotency header, so the key travels as the
 * label `saga-<key>` and `lookup` is a JQL search for it; a plain retry of `execute` WOULD make a second
 * ticket, which is why the harness always looks up (waiting out `lookupLagMs`) before re-sending.
 * Compensatable: closing the ticket leaves a visible, closed ticket (not an exact inverse).
 */
export function createTicketTool(conn: JiraConnection) {
  return defineTool({
    name: 'create_ticket',
    class: ToolClass.COMPENSATABLE,
    version: 1,
    args: ticketArgs,
    identity: ['orderId'],
    audience: [Audience.SUPPORT_TEAM],
    compensate: (_args, key) => ({
      tool: 'close_ticket',
      args: { ticket: ref(key), reason: 'rolled back by run' },
    }),
    async execute(args, ctx) {
      const created = await createIssue(
        conn,
        {
          summary: args.summary,
          description: ticketDescription(args),
          labels: [sagaLabel(ctx.idempotencyKey)],
        },
        ctx.signal,
      );
      return { externalRef: created.key, result: { id: created.id, key: created.key, self: created.self } };
    },
    lookup: (key, ctx) => findLabelledEffect(conn, key, ctx.signal),
    lookupLagMs: conn.config.lookupLagMs,
  });
}
