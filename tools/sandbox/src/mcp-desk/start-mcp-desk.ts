import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createDeskMcpServer } from './desk-mcp-server.js';
import { DeskTickets, type Ticket } from './desk-tickets.js';

export type { Ticket };

/**
 * A fault for the next `tools/call`:
 * - `reset_after`: the call runs (its effect is committed), then the socket is destroyed before the
 *   answer: the lost answer;
 * - `error_after`: the call runs, then the desk answers HTTP 500 instead of its result;
 * - `drop`: the socket is destroyed before anything is done.
 */
export type McpDeskFault = 'reset_after' | 'error_after' | 'drop';

export interface McpDeskOptions {
  /** Default 0: any free port. */
  readonly port?: number;
  readonly host?: string;
  /** How long after a write `find_ticket_by_key` sees it. Default 0. */
  readonly lagMs?: number;
}

export interface RunningMcpDesk {
  /** The MCP endpoint, `http://host:port/mcp`. */
  readonly url: string;
  /** Every ticket, oldest first (copies). */
  tickets(): Ticket[];
  /** Arms `kind` for the next `tools/call` (faults queue up, one per call). */
  failNext(kind: McpDeskFault): void;
  close(): Promise<void>;
}

/** Why 1 MiB: the desk's arguments are a subject and a body; anything larger is a broken client. */
const MAX_BODY_BYTES = 1 << 20;

/**
 * Starts the MCP help-desk stand-in: an MCP server on the official SDK over Streamable HTTP, stateless (a
 * server and transport per request, JSON answers, no GET stream: 405), so any request can be cut off on
 * its own. It uses the SDK's web-standard transport and converts node:http by hand, rather than the node
 * wrapper, so that the desk writes the answer itself and can lose it after the effect is committed.
 */
export async function startMcpDesk(options: McpDeskOptions = {}): Promise<RunningMcpDesk> {
  const tickets = new DeskTickets(options.lagMs ?? 0);
  const faults: McpDeskFault[] = [];
  const http = createServer((req, res) => {
    handle(req, res, tickets, faults).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/mcp`,
    tickets: () => tickets.all(),
    failNext: (kind) => void faults.push(kind),
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.closeAllConnections();
        http.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  tickets: DeskTickets,
  faults: McpDeskFault[],
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://desk');
  if (url.pathname !== '/mcp') return void res.writeHead(404).end();
  if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
  const raw = await readBody(req);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    parsed = undefined; // the transport answers the parse error itself
  }
  const fault = isToolCall(parsed) ? faults.shift() : undefined;
  if (fault === 'drop') return void req.socket.destroy();

  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  const server = createDeskMcpServer(tickets);
  await server.connect(transport);
  try {
    const answer = await transport.handleRequest(toWebRequest(req, url, raw), { parsedBody: parsed });
    const body = await answer.text();
    if (fault === 'reset_after') return void req.socket.destroy();
    if (fault === 'error_after') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
    res.writeHead(answer.status, Object.fromEntries(answer.headers.entries())).end(body);
  } finally {
    await server.close();
  }
}

function isToolCall(message: unknown): boolean {
  return (
    message !== null &&
    typeof message === 'object' &&
    !Array.isArray(message) &&
    (message as { method?: unknown }).method === 'tools/call'
  );
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new Error('request body too large');
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

function toWebRequest(req: IncomingMessage, url: URL, body: Buffer): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(url, { method: 'POST', headers, body: new Uint8Array(body) });
}
