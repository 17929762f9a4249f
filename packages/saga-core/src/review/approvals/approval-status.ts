// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

/**
 * What a human approval covers:
 * - `pivot`: a whole pivot proposal (its commit steps);
 * - `step`: one held forward step outside a pivot;
 * - `compensation`: one compensation of an unwind held before its send, because it moves money above the
 *   run policy's `approveMoneyAbove` or deletes under `approveDeletions` (migration 0014); `steps` names
 *   the forward step it undoes;
 * - `renewal`: the run's authority lapsed (`policy.authorityTtlMs`) and recovery (the compensations, or the
 *   re-dispatch of a step proven not executed) waits for a person to renew it; `steps` names the steps
 *   the recovery plan acts on, and the hash binds the plan in its order. At most one pending per run.
 */
export const ApprovalKind = {
  PIVOT: 'pivot',
  STEP: 'step',
  COMPENSATION: 'compensation',
  RENEWAL: 'renewal',
} as const;
export type ApprovalKind = (typeof ApprovalKind)[keyof typeof ApprovalKind];

/**
 * The life of an approval. Only `pending` is open; every other status is final (single use). The state
 * machine is `APPROVAL_TRANSITIONS` (approval-transitions.ts).
 */
export const ApprovalStatus = {
  /** Waiting for an operator's decision, until `expires_at`. */
  PENDING: 'pending',
  /** An operator approved exactly the proposal whose hash they saw; its steps are released. */
  APPROVED: 'approved',
  /** An operator refused it; a pivot's run unwinds, a held step becomes REJECTED. */
  REJECTED: 'rejected',
  /** Nobody decided before `expires_at` (or a hold it relies on ran out); treated like a rejection. */
  EXPIRED: 'expired',
  /**
   * Withdrawn before anyone decided: a newer pivot of the same run replaced it, or the run was unwound
   * (its comment says which: `withdrawn: run unwound: …`). Its steps become REJECTED, never sent.
   */
  SUPERSEDED: 'superseded',
} as const;
export type ApprovalStatus = (typeof ApprovalStatus)[keyof typeof ApprovalStatus];
