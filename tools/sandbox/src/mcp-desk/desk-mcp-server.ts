import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { DeskTickets, Ticket } from './desk-tickets.js';

/**
 * Where the desk reads the caller's idempotency key: the `_meta` of the `tools/call` request. The desk's own
 * contract, spelled here and not imported: a stand-in of a vendor depends on no harness code.
 */
export const DESK_KEY_META = 'agent-saga/idempotencyKey';

/** What a tool answers about a ticket: the desk's public view (no timestamps). */
function view(t: Ticket) {
  return { id: t.id, subject: t.subject, body: t.body, status: t.status, note: t.note };
}

/** A successful answer: structured content and the same JSON as text, as the MCP spec recommends. */
function answer(structured: Record<string, unknown>): CallToolResult {
  return { structuredContent: structured, content: [{ type: 'text', text: JSON.stringify(structured) }] };
}

/** A tool-level refusal (`isError: true`): the desk did nothing. */
function refusal(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

function keyOf(meta: Record<string, unknown> | undefined): string | null {
  const key = meta?.[DESK_KEY_META];
  return typeof key === 'string' && key.length > 0 ? key : null;
}

/**
 * The desk's MCP server: one instance per HTTP request (the transport is stateless). Tools:
 * - `open_ticket {subject, body}`: additive, not idempotent by itself; under a key in `_meta` the same key
 *   returns the same ticket;
 * - `close_ticket {ticketId, note?}`: idempotent (closing a closed ticket changes nothing), refused for an
 *   unknown ticket;
 * - `find_ticket_by_key {key}` (read-only): `{ tickets }`, the tickets opened or closed under the key, as
 *   the lagging search sees them;
 * - `list_tickets {}` (read-only);
 * - `delete_all_tickets {}` (destructive): what a gateway must refuse to expose unmapped.
 */
export function createDeskMcpServer(tickets: DeskTickets): McpServer {
  const server = new McpServer({ name: 'agent-saga-mcp-desk', version: '1.0.0' });
  server.registerTool(
    'open_ticket',
    {
      description: 'Opens a help-desk ticket.',
      inputSchema: { subject: z.string().min(1).max(200), body: z.string().max(5_000) },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    (args, extra) => answer(view(tickets.open(args.subject, args.body, keyOf(extra._meta)))),
  );
  server.registerTool(
    'close_ticket',
    {
      description: 'Closes a help-desk ticket, with an optional note.',
      inputSchema: { ticketId: z.string().regex(/^T-\d+$/), note: z.string().max(1_000).optional() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    (args, extra) => {
      const ticket = tickets.close(args.ticketId, args.note ?? null, keyOf(extra._meta));
      return ticket ? answer(view(ticket)) : refusal(`no ticket ${args.ticketId}`);
    },
  );
  server.registerTool(
    'find_ticket_by_key',
    {
      description: 'The tickets opened or closed under an idempotency key (the search trails writes).',
      inputSchema: { key: z.string().min(1) },
      annotations: { readOnlyHint: true },
    },
    (args) => answer({ tickets: tickets.findByKey(args.key).map(view) }),
  );
  server.registerTool(
    'list_tickets',
    { description: 'Lists every ticket.', inputSchema: {}, annotations: { readOnlyHint: true } },
    () => answer({ tickets: tickets.all().map(view) }),
  );
  server.registerTool(
    'delete_all_tickets',
    {
      description: 'Deletes every ticket.',
      inputSchema: {},
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    () => answer({ deleted: tickets.deleteAll() }),
  );
  return server;
}
