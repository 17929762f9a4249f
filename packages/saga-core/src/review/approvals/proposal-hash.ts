import { createHash } from 'node:crypto';
import { canonicalJson } from '../../util/canonical-json.js';

/** One step as an approver decides on it: exactly what the executor will send, under which key. */
export interface ProposedStep {
  readonly stepIdx: number;
  readonly tool: string;
  readonly toolVersion: number;
  readonly key: string;
  readonly args: Record<string, unknown>;
}

/**
 * The hash an approval is bound to: sha256 of the canonical JSON of the run and its proposed steps (index,
 * tool, version, key and exact arguments, in step order). Anything that would change what executes changes
 * the hash, so a decision made on an older view of the proposal cannot release a newer one.
 */
export function proposalHash(runId: string, steps: readonly ProposedStep[]): string {
  const ordered = [...steps].sort((a, b) => a.stepIdx - b.stepIdx);
  return createHash('sha256')
    .update(
      canonicalJson({
        runId,
        steps: ordered.map((s) => ({
          stepIdx: s.stepIdx,
          tool: s.tool,
          toolVersion: s.toolVersion,
          key: s.key,
          args: s.args,
        })),
      }),
    )
    .digest('hex');
}
