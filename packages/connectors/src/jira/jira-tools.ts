import type { AnyTool } from '@agent-saga/core';
import { closeTicketTool } from './close-ticket.js';
import { createTicketDraftTool } from './create-ticket-draft.js';
import { createTicketTool } from './create-ticket.js';
import { deleteTicketTool } from './delete-ticket.js';
import type { JiraConfig } from './jira-config.js';
import { createJiraConnection } from './jira-connection.js';
import { openTicketTool } from './open-ticket.js';

/**
 * The Jira Cloud tools: `create_ticket` (→ `close_ticket`), `create_ticket_draft` (→ `delete_ticket`),
 * `open_ticket` (→ `close_ticket`), `close_ticket`, `delete_ticket`. Register all of them together: the
 * registry refuses a compensation that names an unregistered tool.
 */
export function createJiraTools(config: JiraConfig): readonly AnyTool[] {
  const conn = createJiraConnection(config);
  return [
    createTicketTool(conn),
    createTicketDraftTool(conn),
    openTicketTool(conn),
    closeTicketTool(conn),
    deleteTicketTool(conn),
  ];
}
