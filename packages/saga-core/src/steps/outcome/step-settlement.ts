import type { StepPatch } from '../step-row-columns.js';
import type { LookupVerdict } from '../../tools/settle-from-lookup.js';
import { StepStatus } from '../step-status.js';
import { classifyToolError } from './classify-tool-error.js';
import { confirmedEffectColumns } from './confirmed-effect-columns.js';

/**
 * A verdict that settles a step: the effect was found, its absence was proved, or the real system's record
 * shows the call refused under the key.
 */
export type SettlingVerdict = Extract<
  LookupVerdict,
  { readonly kind: 'found' | 'absent' | 'resendable' | 'refused' }
>;

/**
 * What a settling verdict writes to its step, the one mapping every pool that looks up by key uses (the
 * reconciler, the API's inline lookup, the compensator before an unwind): found → CONFIRMED with the
 * effect's columns; absent → NOT_EXECUTED; resendable → NOT_EXECUTED on its way to a re-dispatch; refused
 * → FAILED with the error stored as the executor stores a tool's `ClientError` (`classifyToolError`), so a
 * reader cannot tell which pool learnt it. `patch` is the caller's own (the leases it clears); the
 * effect's columns win over it. The cause and the event stay the caller's: they say who looked.
 */
export function stepSettlement(
  v: SettlingVerdict,
  patch: StepPatch,
): {
  readonly to: typeof StepStatus.CONFIRMED | typeof StepStatus.NOT_EXECUTED | typeof StepStatus.FAILED;
  readonly patch: StepPatch;
} {
  switch (v.kind) {
    case 'found':
      return { to: StepStatus.CONFIRMED, patch: { ...patch, ...confirmedEffectColumns(v.effect) } };
    case 'absent':
      return { to: StepStatus.NOT_EXECUTED, patch };
    // Not proof of absence: the caller sends the step again in the same transaction (`redispatchStep`),
    // and only for a run `mayResendUnproven` allows, so no reader ever sees this NOT_EXECUTED as proof; an
    // unwind that finds the re-dispatch unclaimed withdraws it UNKNOWN (`withdraw-unclaimed-steps.ts`).
    case 'resendable':
      return { to: StepStatus.NOT_EXECUTED, patch };
    case 'refused':
      return {
        to: StepStatus.FAILED,
        patch: { ...patch, error: JSON.stringify(classifyToolError(v.error).error) },
      };
    default: {
      const never: never = v;
      throw new Error(`unhandled verdict ${JSON.stringify(never)}`);
    }
  }
}
