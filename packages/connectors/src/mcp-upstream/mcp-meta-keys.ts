/**
 * The `_meta` keys a `tools/call` to an upstream that accepts them (`acceptsKeyInMeta`) carries, under the
 * `agent-saga/` prefix the MCP spec reserves for a product's own keys: the step's idempotency key (the
 * upstream dedupes on it and stores it, so the lookup can find the effect), and the run and step it
 * belongs to, for the upstream's logs.
 */
export const MCP_META_IDEMPOTENCY_KEY = 'agent-saga/idempotencyKey';
export const MCP_META_RUN_ID = 'agent-saga/runId';
export const MCP_META_STEP_IDX = 'agent-saga/stepIdx';
