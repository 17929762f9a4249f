import type { AnyTool } from '../tools/define-tool.js';
import { readPath } from '../tools/parse-args.js';
import { canonicalJson } from '../util/canonical-json.js';

/**
 * How a retry's arguments differ from the stored intent. A retry never sends its own arguments downstream
 * (the stored intent is what executes); this only decides whether the retry may be answered at all.
 */
export interface RetryArgsDiff {
  /** `identity` paths whose values differ: the retry describes another intent (IDEMPOTENCY_MISMATCH). */
  readonly identityFields: readonly string[];
  /** Whether anything differs at all (a reworded summary), recorded with the retry event. */
  readonly reworded: boolean;
}

/** Compares by canonical JSON, so key order and `undefined` members make no difference. */
export function diffRetryArgs(
  tool: AnyTool,
  stored: Record<string, unknown>,
  next: Record<string, unknown>,
): RetryArgsDiff {
  const identityFields = tool.identity.filter(
    (path) => canonicalJson(readPath(stored, path)) !== canonicalJson(readPath(next, path)),
  );
  return { identityFields, reworded: canonicalJson(stored) !== canonicalJson(next) };
}
