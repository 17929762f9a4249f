import {
  Audience,
  ClientError,
  defineTool,
  ref,
  ToolClass,
  type ForwardEffect,
  type LookupContext,
  type PreconditionVerdict,
} from '@agent-saga/core';
import { z } from 'zod';
import { adfFromText } from './adf.js';
import { findLabelledEffect } from './find-labelled-effect.js';
import { createIssue, getIssue } from './issue-endpoints.js';
import type { JiraConnection } from './jira-connection.js';
import { DONE_CATEGORY, type CreatedIssue } from './jira-wire.js';
import { sagaLabel } from './saga-label.js';
import type { HttpCall } from '../http/send-http-request.js';

/** Arguments of `create_ticket` and `create_ticket_draft`. */
export const ticketArgs = z.object({
  summary: z.string().trim().min(1).max(255),
  orderId: z.string().trim().min(1).max(100),
  description: z.string().max(30_000).optional(),
});
export type TicketArgs = z.infer<typeof ticketArgs>;

/**
 * Creates the ticket of `args` under the step's key, for `create_ticket` and `create_ticket_draft`: the
 * caller's summary, a description of the caller's text then the order it is about, and the label
 * `saga-<key>` its lookup searches by.
 */
export function createTicketIssue(
  conn: JiraConnection,
  args: TicketArgs,
  ctx: { readonly idempotencyKey: string } & HttpCall,
): Promise<CreatedIssue> {
  return createIssue(
    conn,
    {
      summary: args.summary,
      description: adfFromText(`${args.description ?? ''}\nOrder: ${args.orderId}`),
      labels: [sagaLabel(ctx.idempotencyKey)],
    },
    ctx,
  );
}

/**
 * `create_ticket`: a ticket in the team's queue. Jira has no idempotency header, so the key travels as the
 * label `saga-<key>` and `lookup` is a JQL search for it; a plain retry of `execute` WOULD make a second
 * ticket, which is why the harness always looks up before re-sending, and believes "not found" only once
 * `commitHorizonMs` (Jira may commit a create it held past the timeout) and then `lookupLagMs` have passed.
 * Compensatable: closing the ticket leaves a visible, closed ticket (not an exact inverse). Before closing
 * it, the compensator asks {@link ticketPrecondition} whether a person got there first.
 */
export function createTicketTool(conn: JiraConnection) {
  return defineTool({
    name: 'create_ticket',
    description: 'Opens a Jira support ticket for an order. Closed with a comment if the run is undone.',
    class: ToolClass.COMPENSATABLE,
    version: 1,
    args: ticketArgs,
    identity: ['orderId'],
    // Summary and description are free text about a customer's problem (names, addresses, what went
    // wrong); the order id is the shop's reference, needed by agents and naming nobody by itself.
    personal: ['summary', 'description'],
    audience: [Audience.SUPPORT_TEAM],
    compensate: (_args, key) => ({
      tool: 'close_ticket',
      args: { ticket: ref(key), reason: 'rolled back by run' },
    }),
    async execute(args, ctx) {
      const created = await createTicketIssue(conn, args, ctx);
      return { externalRef: created.key, result: { id: created.id, key: created.key, self: created.self } };
    },
    lookup: (key, ctx) => findLabelledEffect(conn, key, ctx),
    precondition: (forward, ctx) => ticketPrecondition(conn, forward, ctx),
    lookupLagMs: conn.config.lookupLagMs,
    commitHorizonMs: conn.config.commitHorizonMs,
  });
}

/** Jira's status category of statuses nobody has started (To Do, Draft, Backlog), whatever they are named. */
const NEW_CATEGORY = 'new';

/**
 * The ticket as the compensation finds it, read live (never from the lagging index), compared with how
 * `create_ticket` left it: in a status of category `new` (the workflow's initial status; the create answer
 * records no status, so the category is what is compared, not the name).
 * - still `new` → `as_left`: close it;
 * - `done` → `already_compensated`: a person closed it; nothing is sent (no label, no second comment);
 * - any other category (`indeterminate`: someone is working on it), or the ticket is gone → changed: closing
 *   it would cut across what a person did, so a person decides.
 * A read that fails otherwise throws: nothing is decided, the compensator asks again later.
 */
async function ticketPrecondition(
  conn: JiraConnection,
  forward: ForwardEffect,
  ctx: LookupContext,
): Promise<PreconditionVerdict> {
  const key = forward.externalRef;
  if (key === null) return { changed: 'the step recorded no ticket key' };
  const issue = await getIssue(conn, key, ctx).catch((err: unknown) => {
    if (err instanceof ClientError && err.details.status === 404) return null;
    throw err;
  });
  if (issue === null) return { changed: `ticket ${key} no longer exists` };
  const { name, statusCategory } = issue.fields.status;
  if (statusCategory.key === NEW_CATEGORY) return 'as_left';
  if (statusCategory.key === DONE_CATEGORY) return 'already_compensated';
  return { changed: `ticket ${key} is ${name} (${statusCategory.key}), was created open` };
}
