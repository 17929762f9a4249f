import type { StepPatch } from '../../db/schema.js';
import type { LookupVerdict } from '../../tools/settle-from-lookup.js';
import { StepStatus } from '../step-status.js';
import { confirmedEffectColumns } from './confirmed-effect-columns.js';

/** A verdict that settles a step: the effect was found, or its absence was proved. */
export type SettlingVerdict = Extract<LookupVerdict, { readonly kind: 'found' | 'absent' }>;

/**
 * What a settling verdict writes to its step, the one mapping every pool that looks up by key uses (the
 * reconciler, the API's inline lookup, the compensator before an unwind): found → CONFIRMED with the
 * effect's columns; absent → NOT_EXECUTED. `patch` is the caller's own (the leases it clears); the effect's
 * columns win over it. The cause and the event stay the caller's: they say who looked.
 */
export function stepSettlement(
  v: SettlingVerdict,
  patch: StepPatch,
): {
  readonly to: typeof StepStatus.CONFIRMED | typeof StepStatus.NOT_EXECUTED;
  readonly patch: StepPatch;
} {
  return v.kind === 'found'
    ? { to: StepStatus.CONFIRMED, patch: { ...patch, ...confirmedEffectColumns(v.effect) } }
    : { to: StepStatus.NOT_EXECUTED, patch };
}
