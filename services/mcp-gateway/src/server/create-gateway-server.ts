/**
 * The MCP server of one gateway session: `tools/list` is the harness's tools, `tools/call` a call in a
 * run. Built on the SDK's low-level `Server` because the tools' input schemas are the harness's JSON
 * Schema (`GET /v1/tools`), not zod.
 *
 * The session/run model:
 * - A session is one MCP connection: a streamable HTTP session (its `Mcp-Session-Id`, bound to the
 *   bearer token that opened it) or the one stdio connection of a local client (the token of SAGA_TOKEN).
 * - Every `tools/call` is a call in a run. A call whose `_meta` carries `agent-saga/runId` goes to that
 *   run (the client's own id; created plain if it does not exist yet); any other call goes to the
 *   session's own run, `mcp-<session id>`, created on its first call. Every result carries
 *   `agent-saga/runId` (and `agent-saga/stepIdx`, `agent-saga/idempotencyKey` when a step was written) in
 *   its `_meta`, so a client can name the run from another session or after a reconnect.
 * - The run's `RunHandle` (from `@agent-saga/client`), shared by every session of the process that names
 *   the run with the same token (`GatewayRuns`), decides which step a call is; the model never does.
 *
 * Why a re-issued call is safe: MCP clients re-issue a call whose response stream broke as a new request
 * (the protocol does not resume streams), so any call may arrive twice, and the first may have taken
 * effect. Four rules make the second land on the first's step and idempotency key:
 * 1. while the first is still in flight inside this process, the same tool with the same arguments in the
 *    same run joins it and reads its answer (`InFlightCalls`);
 * 2. once answered with the step still open (UNKNOWN, INTENDED, AWAITING_APPROVAL), the handle makes a
 *    call to that tool a retry of the open step: the dispatcher answers with its outcome (looked up by
 *    the key at the vendor for an UNKNOWN) and never sends it again;
 * 3. a new session, or another gateway process, naming the run reads the open steps from the log
 *    (`RunHandle` syncs on first use), so rule 2 holds across sessions and restarts;
 * 4. once the step is settled (the answer was lost after the gateway wrote it, or another process saw it
 *    settle), the harness refuses the repeat as DUPLICATE_OPERATION of that step; when the repeat has
 *    exactly the step's tool and arguments, the gateway answers with the step's recorded outcome instead
 *    (`replayReissuedCall`), so the client reads what it would have read the first time.
 * A cancelled request (`notifications/cancelled`) does not cancel its submission: it runs to its answer,
 * which the re-issue joins or finds in the log.
 */
import { McpMetaKey, RUN_ID, type Logger } from '@agent-saga/core';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { Submission } from '@agent-saga/client';
import { asMcpError, callToolResult } from '../calls/call-result.js';
import type { GatewayRuns } from '../runs/gateway-runs.js';
import { describeTool } from '../tools/describe-tools.js';

/** What every session of a gateway process shares. */
export interface GatewayServerDeps {
  readonly runs: GatewayRuns;
  /** The dispatcher's `waitMs` of every call (MCP_WAIT_MS). */
  readonly waitMs: number;
  readonly logger: Logger;
}

/** One session, as its transport identified it. */
export interface GatewaySession {
  /** The agent token the session's calls are made with. */
  readonly token: string;
  /** The session's own run: calls that name no run go here. */
  readonly runId: string;
}

/** The server's name and version, as `initialize` tells the client. */
export const GATEWAY_INFO = { name: 'agent-saga', version: '0.1.0' } as const;

/** Told to the client at `initialize` (clients may hand it to the model). */
const INSTRUCTIONS =
  'Every tool call runs as a step of an agent-saga run, recorded before anything is sent. When a result ' +
  'says UNKNOWN, INTENDED or AWAITING_APPROVAL, call the same tool again with the same arguments to learn ' +
  'the outcome: a repeat lands on the same step and idempotency key, so it never acts twice.';

/** A JSON object of `_meta`, as the request carried it. */
type RequestMeta = CallToolRequest['params']['_meta'];

export function createGatewayServer(deps: GatewayServerDeps, session: GatewaySession): Server {
  const server = new Server(GATEWAY_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
  });
  const client = deps.runs.clientFor(session.token);
  const log = deps.logger.child({ sessionRunId: session.runId });

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    try {
      return { tools: (await client.listTools()).map(describeTool) };
    } catch (err) {
      throw asMcpError(err);
    }
  });

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const { name, arguments: input = {}, _meta } = request.params;
    const runId = runOf(_meta) ?? session.runId;
    const { joined, answer } = deps.runs.submit({
      token: session.token,
      runId,
      tool: name,
      args: input,
      waitMs: deps.waitMs,
    });
    const submission = await answer;
    log.info({ runId, tool: name, joined, ...summary(submission) }, 'tools/call answered');
    return callToolResult(runId, submission);
  });

  return server;
}

/** The run a call names in `_meta`; a malformed one is the app's mistake, refused as invalid params. */
function runOf(meta: RequestMeta): string | undefined {
  const named: unknown = meta?.[McpMetaKey.RUN_ID];
  if (named === undefined) return undefined;
  if (typeof named !== 'string' || !RUN_ID.test(named))
    throw new McpError(
      ErrorCode.InvalidParams,
      `_meta["${McpMetaKey.RUN_ID}"] must be a run id matching ${RUN_ID.source}`,
    );
  return named;
}

/** What the log line says of an answer: its status or error code, never the arguments or result. */
function summary(submission: Submission): Record<string, unknown> {
  if (submission.ok)
    return {
      status: submission.outcome.status,
      ...('stepIdx' in submission.outcome ? { stepIdx: submission.outcome.stepIdx } : {}),
    };
  const { error } = submission;
  return { error: error instanceof Error ? error.name : 'arguments not an object' };
}
