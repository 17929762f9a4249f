/**
 * The `_meta` keys agent-saga reads and writes on MCP messages, under the `agent-saga/` prefix the MCP spec
 * leaves to a product for its own keys. One home for both directions:
 * - the gateway (`services/mcp-gateway`) reads `RUN_ID` on a client's `tools/call` (the run the call
 *   belongs to), writes `RUN_ID`, `STEP_IDX` and `IDEMPOTENCY_KEY` on every result, and describes each
 *   tool in `tools/list` with `CLASS`, `NEEDS_APPROVAL` and `MOVES_MONEY`;
 * - a mapped upstream MCP tool (`@agent-saga/connectors`) sends `IDEMPOTENCY_KEY`, `RUN_ID` and
 *   `STEP_IDX` on every forward `tools/call` to an upstream that accepts them (it dedupes on the key and
 *   stores it, so the lookup finds the effect).
 */
export const McpMetaKey = {
  RUN_ID: 'agent-saga/runId',
  STEP_IDX: 'agent-saga/stepIdx',
  IDEMPOTENCY_KEY: 'agent-saga/idempotencyKey',
  CLASS: 'agent-saga/class',
  NEEDS_APPROVAL: 'agent-saga/needsApproval',
  MOVES_MONEY: 'agent-saga/movesMoney',
} as const;
export type McpMetaKey = (typeof McpMetaKey)[keyof typeof McpMetaKey];
