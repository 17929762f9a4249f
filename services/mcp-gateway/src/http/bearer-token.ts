import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { bearerTokenOf } from '@agent-saga/core';
import { HttpErrorCode, writeJsonRpcError } from './json-rpc-error-response.js';

/** The token of `Authorization: Bearer <token>`, read by core's rule (as the dispatcher reads it). */
export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  return bearerTokenOf(headers.authorization);
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
