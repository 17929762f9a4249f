import {
  CallStatus,
  SagaApiError,
  submissionResult,
  ToolOutcomeUnknown,
  type Submission,
} from '@agent-saga/client';
import { McpMetaKey } from '@agent-saga/core';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * Statuses of the model's result that `isError` marks: the call did not and will not happen as asked, and
 * the model must act on that (the real system said no, a person said no, the harness refused it).
 * Not marked: UNKNOWN, INTENDED, AWAITING_APPROVAL and UNAVAILABLE, where the right move is the same call
 * again (the text says so) — an MCP client that treats `isError` as "give up or try something else" must
 * not be steered away from the one safe move.
 */
const ERROR_STATUSES: ReadonlySet<string> = new Set([CallStatus.FAILED, CallStatus.REJECTED, 'REFUSED']);

/**
 * A submission as an MCP `tools/call` result: `structuredContent` is the very object the AI SDK and OpenAI
 * Agents adapters give the model (`submissionResult` of `@agent-saga/client`), `content` one
 * text block with its JSON, `_meta` the run, step and key when known. Errors about the app rather than the
 * call (a revoked token, a missing run) are thrown as JSON-RPC errors: the model cannot fix them.
 */
export function callToolResult(runId: string, submission: Submission): CallToolResult {
  const result = modelResult(submission);
  // A pure tool's result is the tool's own object: a `status` field in it is not the harness's word.
  const status = submission.ok ? submission.outcome.status : statusOf(result);
  return {
    content: [{ type: 'text', text: JSON.stringify(result) ?? 'null' }],
    ...(isRecord(result) ? { structuredContent: result } : {}),
    isError: status !== undefined && ERROR_STATUSES.has(status),
    _meta: { [McpMetaKey.RUN_ID]: runId, ...stepMeta(submission) },
  };
}

function modelResult(submission: Submission): unknown {
  try {
    return submissionResult(submission);
  } catch (err) {
    throw asMcpError(err);
  }
}

/** The step and key of the answer: from the outcome, or from an UNKNOWN (a pure tool writes no step). */
function stepMeta(submission: Submission): Record<string, unknown> {
  const known = submission.ok
    ? submission.outcome.status === CallStatus.PURE
      ? undefined
      : submission.outcome
    : submission.error instanceof ToolOutcomeUnknown
      ? submission.error
      : undefined;
  return known
    ? { [McpMetaKey.STEP_IDX]: known.stepIdx, [McpMetaKey.IDEMPOTENCY_KEY]: known.idempotencyKey }
    : {};
}

/** An error the model cannot act on, as the JSON-RPC error the client's app reads. */
export function asMcpError(err: unknown): McpError {
  if (err instanceof McpError) return err;
  if (err instanceof SagaApiError)
    return new McpError(ErrorCode.InternalError, `agent-saga: ${err.message}`, { code: err.code });
  return new McpError(ErrorCode.InternalError, err instanceof Error ? err.message : String(err));
}

function statusOf(result: unknown): string | undefined {
  return isRecord(result) && typeof result.status === 'string' ? result.status : undefined;
}

/** `structuredContent` must be a JSON object: a pure tool's array or scalar result goes as text only. */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
