import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hashToken } from '@agent-saga/core';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { createGatewayServer, type GatewayServerDeps } from '../server/create-gateway-server.js';

/** One streamable HTTP session: its transport and server, and the hash of the token that opened it. */
interface HttpSession {
  readonly tokenHash: string;
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
}

/** What a request's session id and token come to. */
export type SessionLookup =
  | { readonly kind: 'found'; readonly transport: StreamableHTTPServerTransport }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'other-token' };

/**
 * The live streamable HTTP sessions of the process (stateful mode: the SDK transport keeps each one's
 * streams in memory, so a session lives in the process that opened it). Each is bound to the token
 * that opened it: a request naming the session with another token is refused, so a leaked session id
 * alone never lets another agent act in its run.
 */
export interface HttpSessions {
  /** Opens a session for an `initialize` request and answers it; kept only once initialized. */
  open(token: string, req: IncomingMessage, res: ServerResponse): Promise<void>;
  find(sessionId: string, token: string): SessionLookup;
  readonly size: number;
  closeAll(): Promise<void>;
}

export function createHttpSessions(deps: GatewayServerDeps): HttpSessions {
  const sessions = new Map<string, HttpSession>();

  async function open(token: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The id is chosen before the transport exists so the session's own run can be named after it.
    const sessionId = randomUUID();
    const server = createGatewayServer(deps, { token, runId: `mcp-${sessionId}` });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      onsessioninitialized: () => {
        sessions.set(sessionId, { tokenHash: hashToken(token), transport, server });
      },
      onsessionclosed: () => {
        sessions.delete(sessionId);
      },
    });
    transport.onclose = () => sessions.delete(sessionId);
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } finally {
      // Not an initialize request (the transport answered 400), or it failed: nothing to keep.
      if (!sessions.has(sessionId)) await server.close();
    }
  }

  return {
    open,
    find(sessionId, token) {
      const session = sessions.get(sessionId);
      if (!session) return { kind: 'unknown' };
      if (session.tokenHash !== hashToken(token)) return { kind: 'other-token' };
      return { kind: 'found', transport: session.transport };
    },
    get size() {
      return sessions.size;
    },
    async closeAll() {
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(all.map((s) => s.server.close()));
    },
  };
}
