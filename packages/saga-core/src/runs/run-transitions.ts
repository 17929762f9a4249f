import { RunStatus } from './run-status.js';

/**
 * The run state machine. Each key is a target status; its value lists the only statuses a run may move to
 * it from. Every update of `runs.status` is a compare-and-set on exactly this list (see `transitionRun`).
 *
 * - RUNNING: a new run; takes calls. Exits to COMPENSATING (unwind), COMPLETED (every step settled),
 *   COMMITTED_WITH_REPAIR (finished forward after repairs), AWAITING_APPROVAL, MANUAL_INTERVENTION.
 * - AWAITING_APPROVAL: a pivot waits for one person's decision; exits to RUNNING (approved),
 *   COMPENSATING (rejected, expired, or unwound instead) or MANUAL_INTERVENTION (stopped for a person: its
 *   deadline passed and its policy does not unwind it, or a renewal of its authority was refused).
 * - COMPENSATING: the compensator owns the run; no new side-effecting call is accepted. Exits only to a
 *   terminal state decided from the log: COMPENSATED, PARTIALLY_COMPENSATED or MANUAL_INTERVENTION.
 * - COMPLETED, COMPENSATED, PARTIALLY_COMPENSATED, COMMITTED_WITH_REPAIR: final.
 * - MANUAL_INTERVENTION: final for the harness; a person takes it from there. An operator may send it back:
 *   to RUNNING (a commit step after the pivot was settled by hand, so the pivot continues) or to
 *   COMPENSATING (retry a compensation that needed them).
 */
export const RUN_TRANSITIONS = {
  [RunStatus.RUNNING]: [RunStatus.AWAITING_APPROVAL, RunStatus.MANUAL_INTERVENTION],
  [RunStatus.AWAITING_APPROVAL]: [RunStatus.RUNNING],
  [RunStatus.COMPENSATING]: [RunStatus.RUNNING, RunStatus.AWAITING_APPROVAL, RunStatus.MANUAL_INTERVENTION],
  [RunStatus.COMPLETED]: [RunStatus.RUNNING],
  [RunStatus.COMMITTED_WITH_REPAIR]: [RunStatus.RUNNING],
  [RunStatus.COMPENSATED]: [RunStatus.COMPENSATING],
  [RunStatus.PARTIALLY_COMPENSATED]: [RunStatus.COMPENSATING],
  [RunStatus.MANUAL_INTERVENTION]: [RunStatus.RUNNING, RunStatus.AWAITING_APPROVAL, RunStatus.COMPENSATING],
} as const satisfies Record<RunStatus, readonly RunStatus[]>;

export function allowedRunSources(to: RunStatus): readonly RunStatus[] {
  return RUN_TRANSITIONS[to];
}
