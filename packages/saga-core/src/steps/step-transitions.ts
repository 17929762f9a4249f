import { StepStatus } from './step-status.js';

/**
 * The step state machine. Each key is a target status; its value lists the only statuses a step may
 * move to it from. Every update of `saga_log.status` is a compare-and-set on exactly this list.
 *
 * - AWAITING_APPROVAL: written at intake for irreversible calls; exits to INTENDED (approved) or REJECTED.
 * - INTENDED: committed before the call; exits to CONFIRMED, FAILED, UNKNOWN, or NOT_EXECUTED when a
 *   lookup proves that an attempt whose lease expired never reached the system. NOT_EXECUTED → INTENDED is
 *   the re-dispatch of a run still going forward (same key, stored arguments). An unclaimed one of a run
 *   that stops going forward is withdrawn: NOT_EXECUTED if never sent, else UNKNOWN (an earlier send may
 *   still commit; `withdraw-unclaimed-steps.ts`).
 * - UNKNOWN: exits only by evidence: CONFIRMED (lookup found it), NOT_EXECUTED (lookup proved absence),
 *   FAILED (lookup found the call refused under the key: `RefusedUnderKey`, past the commit horizon or
 *   after an answered 500 from a vendor that dedupes by key),
 *   MANUAL_INTERVENTION (the harness gave up).
 * - NOT_EXECUTED: exits to INTENDED (re-dispatch), or to MANUAL_INTERVENTION when the re-dispatch budget is
 *   spent (a poison call proven absent again and again: `redispatch-budget.ts`).
 * - MANUAL_INTERVENTION: a person resolves it to CONFIRMED or NOT_EXECUTED.
 * - CONFIRMED, FAILED, REJECTED: final for the forward direction.
 */
export const STEP_TRANSITIONS = {
  [StepStatus.AWAITING_APPROVAL]: [],
  [StepStatus.INTENDED]: [StepStatus.AWAITING_APPROVAL, StepStatus.NOT_EXECUTED],
  [StepStatus.CONFIRMED]: [StepStatus.INTENDED, StepStatus.UNKNOWN, StepStatus.MANUAL_INTERVENTION],
  [StepStatus.FAILED]: [StepStatus.INTENDED, StepStatus.UNKNOWN],
  [StepStatus.UNKNOWN]: [StepStatus.INTENDED],
  [StepStatus.NOT_EXECUTED]: [StepStatus.INTENDED, StepStatus.UNKNOWN, StepStatus.MANUAL_INTERVENTION],
  [StepStatus.REJECTED]: [StepStatus.AWAITING_APPROVAL],
  [StepStatus.MANUAL_INTERVENTION]: [StepStatus.UNKNOWN, StepStatus.INTENDED, StepStatus.NOT_EXECUTED],
} as const satisfies Record<StepStatus, readonly StepStatus[]>;

export function allowedSources(to: StepStatus): readonly StepStatus[] {
  return STEP_TRANSITIONS[to];
}

export function isLegalTransition(from: StepStatus, to: StepStatus): boolean {
  return (STEP_TRANSITIONS[to] as readonly StepStatus[]).includes(from);
}
