import { ClientError, type SagaError } from '@agent-saga/core';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ZodError } from 'zod';
import { classifyHttpFailure } from '../http/classify-http-failure.js';
import { McpOutcomeUnknownError } from './mcp-upstream-errors.js';

/**
 * Maps a failed `tools/call` to an upstream onto what the harness must do. The one place that decides:
 *
 * - A JSON-RPC error the upstream answered (unknown tool, invalid params, …) → {@link ClientError}: the
 *   server refused the request; nothing happened, the step is FAILED. Except `InternalError` (-32603):
 *   a server that crashes in the middle of a handler answers it after the effect may have been made, so
 *   it is unknown (one lookup settles it; FAILED on an effect that exists would let a retry duplicate it).
 * - The SDK's own `RequestTimeout` and `ConnectionClosed` → unknown: the request was sent, no answer came.
 * - An HTTP answer other than 2xx → the plain-fetch vendors' rule ({@link classifyHttpFailure}): a
 *   definitive 4xx with a JSON body (the SDK's JSON-RPC error body) is a refusal; a 5xx and anything else
 *   is unknown. The SDK keeps only the body's text, which is parsed back here.
 * - An answer that does not parse as a `CallToolResult` → unknown: the upstream did answer, so it ran.
 * - Every transport failure (reset, refused, abort, timeout) → unknown, as for HTTP.
 *
 * A `CallToolResult` with `isError: true` is not a failure of the call: the caller turns it into a
 * ClientError (the MCP spec's "tool execution error": the tool ran and said no).
 */
export function classifyMcpFailure(upstream: string, error: unknown): SagaError {
  const vendor = `mcp:${upstream}`;
  if (error instanceof McpError) return classifyJsonRpc(vendor, error);
  if (error instanceof StreamableHTTPError) {
    const status = error.code;
    if (status === undefined || status < 100)
      return new McpOutcomeUnknownError(`${vendor}: ${error.message}`, vendor, 'bad_answer', undefined, {
        cause: error,
      });
    return classifyHttpFailure({ kind: 'response', vendor, status, body: bodyOf(error.message) });
  }
  if (error instanceof ZodError)
    return new McpOutcomeUnknownError(
      `${vendor}: the answer is not a CallToolResult (${error.message.slice(0, 200)})`,
      vendor,
      'bad_result',
      undefined,
      { cause: error },
    );
  return classifyHttpFailure({ kind: 'transport', vendor, error });
}

function classifyJsonRpc(vendor: string, error: McpError): SagaError {
  const unknown = UNKNOWN_JSON_RPC_CODES.get(error.code);
  if (unknown !== undefined)
    return new McpOutcomeUnknownError(`${vendor}: ${error.message}`, vendor, unknown, undefined, {
      cause: error,
    });
  return new ClientError(`${vendor}: ${error.message}`, { vendor, vendorCode: `jsonrpc_${error.code}` });
}

/**
 * JSON-RPC codes after which the effect may exist, with the `vendorCode` stored for each: the SDK's own
 * timeout and closed connection (sent, not answered), and a server's internal error (see above).
 */
const UNKNOWN_JSON_RPC_CODES: ReadonlyMap<number, string> = new Map<number, string>([
  [ErrorCode.RequestTimeout, 'timeout'],
  [ErrorCode.ConnectionClosed, 'closed'],
  [ErrorCode.InternalError, 'internal_error'],
]);

/** The SDK's message is `Streamable HTTP error: Error POSTing to endpoint: <body text>`. */
function bodyOf(message: string): unknown {
  const at = message.indexOf('{');
  if (at < 0) return undefined;
  try {
    return JSON.parse(message.slice(at));
  } catch {
    return undefined;
  }
}
