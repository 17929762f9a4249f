import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createGatewayServer, type GatewayServerDeps } from '../server/create-gateway-server.js';

/** A gateway serving one local client over stdin/stdout. */
export interface StdioGateway {
  /** The session's own run (calls that name none go here). */
  readonly runId: string;
  /** Resolves when the client closed the connection (stdin ended). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * One session over stdio: the process is the session, its token SAGA_TOKEN (already checked at start),
 * its own run `mcp-stdio-<uuid>`. stdout carries the protocol only: the process logs to stderr.
 */
export async function serveStdio(deps: GatewayServerDeps, token: string): Promise<StdioGateway> {
  const runId = `mcp-stdio-${randomUUID()}`;
  const server = createGatewayServer(deps, { token, runId });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
    process.stdin.once('end', resolve);
  });
  await server.connect(transport);
  return { runId, closed, close: () => server.close() };
}
