import {
  ClientError,
  defineTool,
  DEFAULT_TOOL_TIMEOUT_MS,
  McpMetaKey,
  type AnyTool,
  type ToolContext,
} from '@agent-saga/core';
import { buildCompensation } from './compensation-template.js';
import { inputSchemaToZod } from './input-schema-to-zod.js';
import type { McpMappedTool } from './mcp-upstream-mapping.js';
import { effectOf, errorText, lookupEffectOf, resultValue } from './read-tool-result.js';
import type { McpTool, UpstreamConnection } from './upstream-connection.js';

/** Why 1,024: core's limit on a description; an upstream's longer one is cut, not refused. */
const MAX_DESCRIPTION = 1024;

/** What one harness tool is built from: its mapping, the upstream's declaration, and the connection. */
export interface UpstreamToolParts {
  readonly name: string;
  readonly mapped: McpMappedTool;
  readonly upstreamTool: McpTool;
  readonly connection: UpstreamConnection;
}

/**
 * One harness tool over one upstream MCP tool. `execute` sends `tools/call` with the key (in `_meta` when
 * the upstream accepts it, in `keyArg` when mapped), under the step's signal and the tool's timeout; a
 * result with `isError: true` is the tool's refusal ({@link ClientError}: FAILED); failures of the call
 * are classified by the connection. `lookup` calls the mapped lookup tool with `{ [keyArg]: key }` and
 * nothing in `_meta`: an upstream that dedupes calls by that key would answer the read with the forward
 * call's cached result.
 */
export function buildUpstreamTool({ name, mapped, upstreamTool, connection }: UpstreamToolParts): AnyTool {
  const { schema, note } = inputSchemaToZod(upstreamTool.inputSchema, mapped.keyArg);
  const timeoutMs = mapped.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const vendor = `mcp:${connection.name}`;
  const described = mapped.description ?? upstreamTool.description;
  const description = [described, note].filter(Boolean).join(' ').slice(0, MAX_DESCRIPTION) || undefined;
  const { lookup, compensation } = mapped;

  const execute = async (args: Record<string, unknown>, ctx: ToolContext) => {
    const result = await connection.call(
      {
        name: mapped.tool,
        arguments: mapped.keyArg === undefined ? args : { ...args, [mapped.keyArg]: ctx.idempotencyKey },
        ...(connection.entry.acceptsKeyInMeta
          ? {
              _meta: {
                [McpMetaKey.IDEMPOTENCY_KEY]: ctx.idempotencyKey,
                [McpMetaKey.RUN_ID]: ctx.runId,
                [McpMetaKey.STEP_IDX]: ctx.stepIdx,
              },
            }
          : {}),
      },
      { signal: ctx.signal, timeoutMs, ...traceOf(ctx) },
    );
    if (result.isError)
      throw new ClientError(`${vendor}: ${mapped.tool} refused: ${errorText(result)}`, {
        vendor,
        vendorCode: 'tool_error',
      });
    return effectOf(resultValue(result), mapped.externalRef);
  };

  return defineTool({
    name,
    ...(description !== undefined ? { description } : {}),
    class: mapped.class,
    version: mapped.version,
    args: schema,
    ...(mapped.identity ? { identity: mapped.identity } : {}),
    ...(mapped.repeatable !== undefined ? { repeatable: mapped.repeatable } : {}),
    ...(mapped.deletes !== undefined ? { deletes: mapped.deletes } : {}),
    ...(mapped.secret ? { secret: mapped.secret } : {}),
    ...(mapped.personal ? { personal: mapped.personal } : {}),
    ...(mapped.personalResult ? { personalResult: mapped.personalResult } : {}),
    timeoutMs,
    ...(mapped.commitHorizonMs !== undefined ? { commitHorizonMs: mapped.commitHorizonMs } : {}),
    execute,
    ...(lookup
      ? {
          lookupLagMs: lookup.lagMs,
          lookup: async (key: string, ctx: Pick<ToolContext, 'signal' | 'traceparent'>) => {
            const result = await connection.call(
              { name: lookup.tool, arguments: { [lookup.keyArg]: key } },
              { signal: ctx.signal, timeoutMs, ...traceOf(ctx) },
            );
            if (result.isError)
              throw new ClientError(`${vendor}: lookup ${lookup.tool} refused: ${errorText(result)}`, {
                vendor,
                vendorCode: 'tool_error',
              });
            return lookupEffectOf(
              resultValue(result),
              lookup.resultPath,
              lookup.externalRef ?? mapped.externalRef,
            );
          },
        }
      : {}),
    ...(compensation
      ? {
          compensationTool: compensation.tool,
          compensate: (args: Record<string, unknown>, key: string) =>
            buildCompensation(compensation, args, key),
        }
      : {}),
  });
}

/** The call's `traceparent`, for `UpstreamConnection.call` (which puts it in `_meta`); none outside a trace. */
function traceOf(ctx: Pick<ToolContext, 'traceparent'>): { traceparent?: string } {
  return ctx.traceparent !== undefined ? { traceparent: ctx.traceparent } : {};
}
