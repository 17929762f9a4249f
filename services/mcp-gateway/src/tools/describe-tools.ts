import { describeForModel, type ToolView } from '@agent-saga/client';
import { McpMetaKey } from '@agent-saga/core';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/** Tool classes whose effect an MCP client should treat as destructive (it changes the world for good). */
const DESTRUCTIVE_CLASSES: ReadonlySet<string> = new Set(['compensatable', 'irreversible']);

/**
 * One harness tool as MCP lists it. The annotations come from the class:
 * - `readOnlyHint` for pure tools (they write no step and change nothing);
 * - `destructiveHint` for compensatable and irreversible ones (a reversible tool's effect is undone
 *   exactly, so it is not destructive in MCP's sense);
 * - `idempotentHint` always: every call goes through a run, where a repeat of the same call lands on the
 *   same step and idempotency key, so calling again never acts twice;
 * - `openWorldHint` for every tool that reaches a real system (all but pure ones).
 */
export function describeTool(view: ToolView): Tool {
  const pure = view.class === 'pure';
  return {
    name: view.name,
    // The words the AI SDK and OpenAI Agents adapters give, so a model reads the same through MCP.
    description: describeForModel(view),
    inputSchema: { ...view.inputSchema, type: 'object' },
    annotations: {
      readOnlyHint: pure,
      destructiveHint: DESTRUCTIVE_CLASSES.has(view.class),
      idempotentHint: true,
      openWorldHint: !pure,
    },
    _meta: {
      [McpMetaKey.CLASS]: view.class,
      [McpMetaKey.NEEDS_APPROVAL]: view.needsApproval,
      [McpMetaKey.MOVES_MONEY]: view.movesMoney,
    },
  };
}
