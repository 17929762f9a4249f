import { createHmac } from 'node:crypto';
import { sha256Hex } from '../../util/sha256-hex.js';
import { currentKeyNamespace, type KeyNamespace } from './key-namespace.js';

/**
 * The idempotency key of a step, as lowercase hex, first 32 characters:
 * - no namespace: sha256("<runId>:<stepIdx>:<tool>"), the keys every deployment derived before namespaces
 *   existed (unchanged, so the keys in existing logs and at the vendors stay valid);
 * - with a namespace: HMAC-SHA256 keyed by the namespace over the same text. The namespace is hashed in,
 *   never written into the key: the key keeps its length and alphabet (what Jira labels and email tags
 *   allow), two namespaces give unrelated keys for the same step, and neither equals the bare key.
 *
 * Derived from the step's identity only, never from the model's arguments, so a reworded retry of the same
 * step carries the same key to the real system. `namespace` defaults to the process's
 * (`SAGA_KEY_NAMESPACE`, installed by `runRole`; see `key-namespace.ts` for why per process is safe);
 * `null` asks for no namespace explicitly.
 */
export function stepKey(
  runId: string,
  stepIdx: number,
  tool: string,
  namespace: KeyNamespace = currentKeyNamespace(),
): string {
  if (!Number.isInteger(stepIdx) || stepIdx < 0) throw new RangeError(`stepIdx must be a natural number`);
  const identity = `${runId}:${stepIdx}:${tool}`;
  const digest =
    namespace === null ? sha256Hex(identity) : createHmac('sha256', namespace).update(identity).digest('hex');
  return digest.slice(0, 32);
}

/** The key under which the compensation of step `stepIdx` (forward tool `forwardTool`) is sent. */
export function compensationKey(
  runId: string,
  stepIdx: number,
  forwardTool: string,
  namespace: KeyNamespace = currentKeyNamespace(),
): string {
  return stepKey(runId, stepIdx, `compensate:${forwardTool}`, namespace);
}
