import { CompensationStatus } from './compensation-status.js';

/**
 * The state machine of one step's compensation (`compensations.status`, mirrored on
 * `saga_log.compensation_status`). Each key is a target; its value the only sources. A row is born
 * `pending` (something to undo) or `skipped` (nothing to undo, or nothing the harness may undo by itself).
 *
 * - pending: planned, never sent. Exits to running (claimed with a lease, intent written before the call),
 *   compensated (a lookup by the compensation key found it done: nothing is sent), skipped, failed (the
 *   stored command cannot be made: a reference that does not resolve, arguments its tool refuses),
 *   awaiting_approval (the run policy wants a person first: money above `approveMoneyAbove`, a deletion
 *   under `approveDeletions`; written with its `compensation` approval, nothing sent).
 * - awaiting_approval: held for its approval (`compensations.approval_id`). Exits to pending (approved: the
 *   next pass sends it, once, under its own key) or failed (rejected, expired or withdrawn: never sent,
 *   for good; the run's finish opens a case for it). Not due, never claimed: the rest of the unwind goes
 *   on around it, and the steps it must be undone before wait for it (reverse dependency order).
 * - running: an attempt holds a lease and may be under way. Exits to compensated (the tool returned),
 *   failed (the system said no), unknown (anything else, or the lease ran out with the holder gone).
 * - unknown: nobody knows whether the attempt took effect. Exits only by evidence: compensated (lookup by
 *   the compensation key found it), running (lookup proved absence past the tool's lag: sent again with
 *   the SAME key), failed (the harness gave up: a person must look).
 * - failed: the last attempt was refused. Exits to running (retry with the same key after a backoff,
 *   within the attempt budget) or compensated (a lookup found it done after all). Past the budget it stays
 *   failed and the run needs a person.
 * - compensated, skipped: final.
 *
 * One row moves by `transitionCompensation`; the compensator's set-based statements (claim, outcome) take
 * their sources from {@link allowedCompensationSources}; all of them write the mirror on `saga_log` with
 * `mirrorCompensationStatus`.
 */
export const COMPENSATION_TRANSITIONS = {
  [CompensationStatus.PENDING]: [CompensationStatus.AWAITING_APPROVAL],
  [CompensationStatus.AWAITING_APPROVAL]: [CompensationStatus.PENDING],
  [CompensationStatus.RUNNING]: [
    CompensationStatus.PENDING,
    CompensationStatus.UNKNOWN,
    CompensationStatus.FAILED,
  ],
  [CompensationStatus.COMPENSATED]: [
    CompensationStatus.PENDING,
    CompensationStatus.RUNNING,
    CompensationStatus.UNKNOWN,
    CompensationStatus.FAILED,
  ],
  [CompensationStatus.UNKNOWN]: [CompensationStatus.RUNNING],
  [CompensationStatus.FAILED]: [
    CompensationStatus.PENDING,
    CompensationStatus.AWAITING_APPROVAL,
    CompensationStatus.RUNNING,
    CompensationStatus.UNKNOWN,
  ],
  [CompensationStatus.SKIPPED]: [CompensationStatus.PENDING],
} as const satisfies Record<CompensationStatus, readonly CompensationStatus[]>;

/** The only statuses a compensation may move to `to` from: the rule every move, single or set-based, uses. */
export function allowedCompensationSources(to: CompensationStatus): readonly CompensationStatus[] {
  return COMPENSATION_TRANSITIONS[to];
}
