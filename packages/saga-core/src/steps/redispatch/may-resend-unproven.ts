import type { RunRow } from '../../db/schema.js';
import { recoveryPolicyOf } from '../../review/approvals/recovery-policy.js';
import { RunStatus } from '../../runs/run-status.js';
import type { LookupVerdict } from '../../tools/settle-from-lookup.js';

/**
 * Whether a `resendable` lookup verdict (nothing found past the tool's lag, on a tool whose real system
 * dedupes by key: nothing is proved absent) may send the step again for this run, the one rule of every
 * pool that re-dispatches from a lookup (the reconciler, the API's inline lookup):
 *
 * - only a run still going forward (RUNNING): an unwinding or stopped run needs proof of absence, since it
 *   concludes "nothing to undo" from NOT_EXECUTED;
 * - only a run whose authority cannot lapse (no `authorityTtlMs`): a re-dispatch past the authority leaves
 *   the step NOT_EXECUTED while it waits for a renewal, which an unwind would read as proved absent.
 *
 * Otherwise the verdict is read as `too-early`: the step waits for the horizon, as before.
 */
export function mayResendUnproven(run: Pick<RunRow, 'status' | 'policy'>): boolean {
  return run.status === RunStatus.RUNNING && recoveryPolicyOf(run.policy).authorityTtlMs === undefined;
}

/** `v`, with a `resendable` verdict read as `too-early` where {@link mayResendUnproven} says no. */
export function verdictForRun(v: LookupVerdict, run: Pick<RunRow, 'status' | 'policy'>): LookupVerdict {
  return v.kind === 'resendable' && !mayResendUnproven(run)
    ? { kind: 'too-early', believableAt: v.believableAt }
    : v;
}
