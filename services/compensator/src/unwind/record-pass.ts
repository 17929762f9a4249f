import { CompensationStatus } from '@agent-saga/core';
import type { Attempted } from './attempt-compensation.js';
import { MOVED_MEANWHILE, unhandled, type CompensationPass } from './compensation-pass.js';
import { endPass } from './end-pass.js';
import { recordAttemptOutcome } from './record-attempt-outcome.js';
import type { UnwindDeps } from './unwind-deps.js';

/**
 * Stage 6 of `runCompensation`, the record: what the pass came to, written once. A sent attempt's outcome
 * under its lease (`recordAttemptOutcome`); a pass that ended without a send, its end (`endPass`); a
 * claim another compensator won, nothing (its pass sent nothing).
 */
export async function recordPass(d: UnwindDeps, pass: CompensationPass, prev: Attempted): Promise<void> {
  switch (prev.kind) {
    case 'called':
      return recordAttemptOutcome(d, prev.claimed, prev.tool, prev.call, pass.log);
    case 'claim-lost':
      return void pass.log.info({ to: CompensationStatus.RUNNING }, MOVED_MEANWHILE);
    case 'ended':
      return endPass(d, pass, prev);
    default:
      return unhandled(prev, 'stage result');
  }
}
