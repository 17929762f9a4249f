import type { ServerResponse } from 'node:http';

/**
 * JSON-RPC error codes of the HTTP layer, from the server-defined range (-32000 to -32099). The SDK's
 * transport uses -32000 for its own HTTP-level refusals (a bad session, a bad header); these two add
 * what the gateway refuses before the transport sees a request.
 */
export const HttpErrorCode = {
  /** The SDK transport's code for a refused request (an unknown session, a wrong method). */
  REFUSED: -32000,
  /** No bearer token, or one the harness does not know. */
  UNAUTHORIZED: -32001,
  /** The session belongs to another token. */
  FORBIDDEN: -32003,
  /** The harness could not be reached to check the token. */
  UNAVAILABLE: -32004,
} as const;
export type HttpErrorCode = (typeof HttpErrorCode)[keyof typeof HttpErrorCode];

/**
 * Answers an HTTP request with a JSON-RPC error body (`id: null`: the request was not read as JSON-RPC),
 * the shape MCP clients parse from a refused streamable HTTP request.
 */
export function writeJsonRpcError(
  res: ServerResponse,
  status: number,
  code: HttpErrorCode,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
