import { ApprovalStatus } from './approval-status.js';

/**
 * The state machine of an approval (`approvals.status`). Each key is a target; its value the only sources.
 * An approval is born `pending` (`createApproval`, in the transaction that writes the steps it covers) and
 * is single use: its one move is out of `pending`, to a final status, by compare-and-set
 * (`transitionApproval`), recorded with who and when.
 *
 * - pending: waiting for an operator until `expires_at`. Exits to approved (an operator approved the hash
 *   they saw), rejected (an operator refused), expired (the deadline passed: the decision or the expiry
 *   sweep), superseded (withdrawn before anyone decided: a newer pivot, or the run unwound).
 * - approved, rejected, expired, superseded: final. A second decision is refused (409 APPROVAL_DECIDED).
 */
export const APPROVAL_TRANSITIONS = {
  [ApprovalStatus.PENDING]: [],
  [ApprovalStatus.APPROVED]: [ApprovalStatus.PENDING],
  [ApprovalStatus.REJECTED]: [ApprovalStatus.PENDING],
  [ApprovalStatus.EXPIRED]: [ApprovalStatus.PENDING],
  [ApprovalStatus.SUPERSEDED]: [ApprovalStatus.PENDING],
} as const satisfies Record<ApprovalStatus, readonly ApprovalStatus[]>;

/** The statuses an approval may move to `to` from. */
export function allowedApprovalSources(to: ApprovalStatus): readonly ApprovalStatus[] {
  return APPROVAL_TRANSITIONS[to];
}

export function isLegalApprovalTransition(from: ApprovalStatus, to: ApprovalStatus): boolean {
  return (APPROVAL_TRANSITIONS[to] as readonly ApprovalStatus[]).includes(from);
}
