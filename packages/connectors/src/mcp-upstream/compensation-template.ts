import { readPath, ref, type CompensationCommand } from '@agent-saga/core';
import type { McpMappedTool } from './mcp-upstream-mapping.js';

/** The template value that becomes the forward step's external id (`ref(key)`). */
const EXTERNAL_REF = '$externalRef';
/** The template prefix that copies a forward argument (`$args.subject`). */
const ARGS_PREFIX = '$args.';
/** Marks a value to leave out: `$args.<path>` of an argument the forward call did not have. */
const OMIT = Symbol('omit');

/**
 * Builds the stored compensation of a forward call from the mapping's template (see
 * {@link McpMappedTool.compensation}), before the call: `"$externalRef"` → `ref(key)`, `"$args.<path>"` →
 * the forward argument (left out when missing), anything else literal. Nested objects and arrays are
 * templated the same way.
 */
export function buildCompensation(
  compensation: NonNullable<McpMappedTool['compensation']>,
  args: Record<string, unknown>,
  key: string,
): CompensationCommand {
  const fill = (value: unknown): unknown => {
    if (value === EXTERNAL_REF) return ref(key);
    if (typeof value === 'string' && value.startsWith(ARGS_PREFIX)) {
      const copied = readPath(args, value.slice(ARGS_PREFIX.length));
      return copied === undefined ? OMIT : copied;
    }
    if (Array.isArray(value)) return value.map(fill).filter((v) => v !== OMIT);
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(
        Object.entries(value)
          .map(([k, v]) => [k, fill(v)] as const)
          .filter(([, v]) => v !== OMIT),
      );
    return value;
  };
  return { tool: compensation.tool, args: fill(compensation.args) as Record<string, unknown> };
}
