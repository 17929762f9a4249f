import { Audience, ClientError, defineTool, ref, ToolClass } from '@agent-saga/core';
import { HttpOutcomeUnknownError } from '../http/http-errors.js';
import { createTicketIssue, ticketArgs } from './create-ticket.js';
import { findLabelledEffect } from './find-labelled-effect.js';
import { deleteIssue, getIssue } from './issue-endpoints.js';
import type { JiraConnection } from './jira-connection.js';
import { transitionToStatus } from './transition-to-status.js';
import type { HttpCall } from '../http/send-http-request.js';

/**
 * `create_ticket_draft`: a ticket parked in `JIRA_DRAFT_STATUS`, which the team's queue does not show, until
 * `open_ticket` moves it in. Jira cannot create an issue in a non-initial status, so this is two calls:
 * create (labelled `saga-<key>`), then transition to the draft status; for that moment the ticket sits in the
 * initial status. Reversible: deleting a draft nobody was shown leaves no trace for anyone outside.
 *
 * If the transition is refused (no transition to the draft status: a configuration problem), the new ticket
 * is deleted again and the refusal is reported as a `ClientError` (nothing remains); if that delete fails
 * too, the outcome is unknown and the lookup will find the ticket.
 *
 * The lookup reports the labelled ticket with its live status; a ticket whose move to the draft status did
 * not happen is still the effect (it exists, and `delete_ticket` removes it), with `result.status` saying so.
 */
export function createTicketDraftTool(conn: JiraConnection) {
  return defineTool({
    name: 'create_ticket_draft',
    description:
      'Creates a Jira ticket as a draft that nobody works on yet; open_ticket opens it. Deleted if the run is undone.',
    class: ToolClass.REVERSIBLE,
    version: 1,
    args: ticketArgs,
    identity: ['orderId'],
    // As create_ticket: free text about a customer's problem.
    personal: ['summary', 'description'],
    audience: [Audience.AGENT],
    compensate: (_args, key) => ({ tool: 'delete_ticket', args: { ticket: ref(key) } }),
    async execute(args, ctx) {
      const created = await createTicketIssue(conn, args, ctx);
      try {
        await transitionToStatus(conn, created.key, { name: conn.config.draftStatus }, undefined, ctx);
      } catch (error) {
        if (!(error instanceof ClientError)) throw error;
        await undoCreate(conn, created.key, error, ctx);
        throw error;
      }
      return {
        externalRef: created.key,
        result: { id: created.id, key: created.key, self: created.self, status: conn.config.draftStatus },
      };
    },
    lookup: (key, ctx) =>
      findLabelledEffect(conn, key, ctx, async (issue) => {
        const live = await getIssue(conn, issue.key, ctx);
        return { id: live.id, key: live.key, status: live.fields.status.name };
      }),
    lookupLagMs: conn.config.lookupLagMs,
    commitHorizonMs: conn.config.commitHorizonMs,
  });
}

async function undoCreate(conn: JiraConnection, key: string, refusal: ClientError, call: HttpCall) {
  try {
    await deleteIssue(conn, key, call);
  } catch (cause) {
    throw new HttpOutcomeUnknownError(
      `jira: ${key} was created but could not be moved to ${conn.config.draftStatus} (${refusal.message}) nor deleted`,
      { vendor: 'jira', vendorCode: 'draft_transition_failed' },
      { cause },
    );
  }
}
