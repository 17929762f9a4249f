import type { UnwindDeps } from './unwind-deps.js';
import { ended, giveUp, type CompensationPass, type Ended, type GoingOn } from './compensation-pass.js';

/** The compensation's tool is registered and the row has its key: the pass can look and send. */
export type ToolFound = ({ readonly kind: 'tool-found' } & GoingOn) | Ended;

/**
 * Stage 0 of `runCompensation`: the compensation tool this process has registered, and the row's key.
 * Without either nothing can be looked up or sent: the pass gives up (a person must look).
 */
export function findTool(d: UnwindDeps, pass: CompensationPass): ToolFound {
  const { comp } = pass;
  const tool = comp.tool ? d.registry.get(comp.tool) : undefined;
  if (!tool || !comp.idempotency_key)
    return ended(giveUp(`compensation tool ${comp.tool ?? '(none)'} is not registered`), []);
  return { kind: 'tool-found', tool, key: comp.idempotency_key, lookups: [] };
}
