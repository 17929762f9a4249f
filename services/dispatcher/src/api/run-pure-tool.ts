import {
  callTool,
  ClientError,
  ErrorCode,
  SagaError,
  stepKey,
  type AnyTool,
  type Logger,
} from '@agent-saga/core';
import type { CallAnswer } from './call-outcome.js';

/** A pure tool threw something other than a ClientError (it only reads; the caller may simply retry). */
export class PureToolError extends SagaError {
  readonly code = ErrorCode.TOOL_ERROR;
  override readonly httpStatus = 502;
}

/**
 * Runs a pure tool at once: it only reads, so there is no saga-log row, no key to keep, and the cursor does
 * not move. It still gets a full context (with a key derived from the position it was called at, for
 * tracing) and is aborted at its timeout, by core's one `callTool`.
 */
export async function runPureTool(input: {
  readonly tool: AnyTool;
  readonly args: Record<string, unknown>;
  readonly runId: string;
  readonly tenantId: string;
  readonly stepIdx: number;
  readonly log: Logger;
}): Promise<CallAnswer> {
  const key = stepKey(input.runId, input.stepIdx, `pure:${input.tool.name}`);
  const call = await callTool(input.tool, input.args, {
    idempotencyKey: key,
    runId: input.runId,
    stepIdx: input.stepIdx,
    tenantId: input.tenantId,
    attempt: 1,
    logger: input.log.child({ runId: input.runId, stepIdx: input.stepIdx, key, tool: input.tool.name }),
  });
  if (call.ok) return { statusCode: 200, body: { status: 'PURE', result: call.effect.result } };
  const err = call.error;
  if (err instanceof ClientError) throw err;
  throw new PureToolError(
    `pure tool ${input.tool.name} failed: ${err instanceof Error ? err.message : String(err)}`,
    { cause: err },
  );
}
