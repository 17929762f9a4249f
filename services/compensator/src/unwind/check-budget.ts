import {
  ended,
  giveUp,
  unhandled,
  type CompensationPass,
  type Ended,
  type GoingOn,
} from './compensation-pass.js';
import type { LookedFirst } from './look-first.js';
import type { UnwindDeps } from './unwind-deps.js';

/** The compensation may be sent once more. */
export type BudgetChecked = ({ readonly kind: 'within-budget' } & GoingOn) | Ended;

/**
 * Stage 2 of `runCompensation`: nothing found by the key, so the pass would send; past
 * COMPENSATION_MAX_ATTEMPTS attempts, none confirmed, it gives up instead (a person must look). Checked
 * after the lookup, so a compensation found done is settled whatever its count.
 */
export function checkBudget(d: UnwindDeps, pass: CompensationPass, prev: LookedFirst): BudgetChecked {
  switch (prev.kind) {
    case 'ended':
      return prev;
    case 'not-found': {
      const { attempts } = pass.comp;
      const budget = d.config.COMPENSATION_MAX_ATTEMPTS;
      if (attempts >= budget)
        return ended(giveUp(`${attempts} attempts, none confirmed (budget ${budget})`), prev.lookups);
      return { ...prev, kind: 'within-budget' };
    }
    default:
      return unhandled(prev, 'stage result');
  }
}
