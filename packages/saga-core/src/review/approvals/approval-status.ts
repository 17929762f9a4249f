// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

/** What a human approval covers: a whole pivot proposal, or one held step outside a pivot. */
export const ApprovalKind = { PIVOT: 'pivot', STEP: 'step' } as const;
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
