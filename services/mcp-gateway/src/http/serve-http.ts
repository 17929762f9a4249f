import {
  createServer,
  type IncomingMessage,
  type Server as NodeServer,
  type ServerResponse,
} from 'node:http';
import { ServiceUnavailableError, UnauthorizedError } from '@agent-saga/client';
import type { GatewayServerDeps } from '../server/create-gateway-server.js';
import { bearerToken, writeUnauthorized } from './bearer-token.js';
import { createHttpSessions, type HttpSessions } from './http-sessions.js';
import { HttpErrorCode, writeJsonRpcError } from './json-rpc-error-response.js';

/** The MCP endpoint's path, as clients are told to reach it. */
export const MCP_PATH = '/mcp';

/** A listening HTTP gateway. */
export interface HttpGateway {
  /** The port it listens on (the OS's choice when MCP_PORT is 0). */
  readonly port: number;
  /** Stops taking requests, lets calls in flight answer, then closes every session. */
  close(): Promise<void>;
}

export interface HttpGatewayOptions {
  readonly host: string;
  readonly port: number;
  /**
   * Longest wait in `close` for calls in flight to be answered. A call cut off here is no worse than a
   * broken stream: its step is in the log and the client's re-issue lands on it.
   */
  readonly drainMs: number;
}

/**
 * Streamable HTTP at `/mcp` (POST, GET and DELETE, through the SDK's transport in stateful mode) and
 * `GET /healthz`. Every `/mcp` request carries the agent's bearer token: a request without one, or an
 * `initialize` with one the harness refuses (checked by listing its tools, the first call the session
 * would make anyway), is answered 401 with a JSON-RPC error and `WWW-Authenticate: Bearer`; a request
 * naming another token's session is answered 403.
 */
export async function serveHttp(deps: GatewayServerDeps, options: HttpGatewayOptions): Promise<HttpGateway> {
  const sessions = createHttpSessions(deps);
  const log = deps.logger;
  const http = createServer((req, res) => {
    handle(sessions, deps, req, res).catch((err: unknown) => {
      log.error({ err, method: req.method, url: req.url }, 'mcp request failed');
      writeJsonRpcError(res, 500, HttpErrorCode.REFUSED, 'internal error of the MCP gateway');
    });
  });
  await listen(http, options);
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  return {
    port,
    async close() {
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      await Promise.race([deps.runs.settled(), sleep(options.drainMs)]);
      await sessions.closeAll();
      http.closeAllConnections();
      await closed;
    },
  };
}

async function handle(
  sessions: HttpSessions,
  deps: GatewayServerDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://gateway').pathname;
  if (path === '/healthz' && req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
    return;
  }
  if (path !== MCP_PATH) {
    writeJsonRpcError(res, 404, HttpErrorCode.REFUSED, `no route ${req.method} ${path}`);
    return;
  }
  const token = bearerToken(req.headers);
  if (token === undefined) return writeUnauthorized(res, false);

  const sessionId = req.headers['mcp-session-id'];
  if (typeof sessionId === 'string') {
    const found = sessions.find(sessionId, token);
    if (found.kind === 'found') return found.transport.handleRequest(req, res);
    if (found.kind === 'other-token')
      return writeJsonRpcError(res, 403, HttpErrorCode.FORBIDDEN, 'this session belongs to another token');
    return writeJsonRpcError(res, 404, HttpErrorCode.REFUSED, 'Session not found');
  }
  if (req.method !== 'POST')
    return writeJsonRpcError(
      res,
      400,
      HttpErrorCode.REFUSED,
      'Bad Request: Mcp-Session-Id header is required',
    );
  if (!(await tokenAccepted(deps, token, res))) return;
  await sessions.open(token, req, res);
}

/** Checks a new session's token by the first call it would make; answers the refusal when it fails. */
async function tokenAccepted(deps: GatewayServerDeps, token: string, res: ServerResponse): Promise<boolean> {
  try {
    await deps.runs.clientFor(token).listTools();
    return true;
  } catch (err) {
    if (err instanceof UnauthorizedError) writeUnauthorized(res, true);
    else if (err instanceof ServiceUnavailableError)
      writeJsonRpcError(res, 503, HttpErrorCode.UNAVAILABLE, 'agent-saga is unreachable; try again', {
        'retry-after': '1',
      });
    else throw err;
    return false;
  }
}

function listen(http: NodeServer, { host, port }: HttpGatewayOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
