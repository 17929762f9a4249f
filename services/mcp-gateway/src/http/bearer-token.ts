import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { HttpErrorCode, writeJsonRpcError } from './json-rpc-error-response.js';

/** The token of `Authorization: Bearer <token>`, as the dispatcher reads it; undefined when absent. */
export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const header = headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/**
 * A 401 with the challenge of RFC 6750: `invalid_token` when a token was sent and the harness refused
 * it, a bare challenge when none was sent. The token is never echoed or logged.
 */
export function writeUnauthorized(res: ServerResponse, sent: boolean): void {
  writeJsonRpcError(
    res,
    401,
    HttpErrorCode.UNAUTHORIZED,
    sent
      ? 'unknown or revoked token: send an agent-saga agent token as Authorization: Bearer <token>'
      : 'missing bearer token (Authorization: Bearer <agent-saga agent token>)',
    {
      'www-authenticate': sent
        ? 'Bearer realm="agent-saga", error="invalid_token"'
        : 'Bearer realm="agent-saga"',
    },
  );
}
