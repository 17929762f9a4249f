/**
 * The statuses and choices of the run and review endpoints, as the dispatcher sends and accepts them.
 *
 * They mirror `@agent-saga/core` (`RunStatus`, `ApprovalStatus`, `ReviewStatus`, …) value for value, a
 * correspondence the client's wire-contract test checks; they are written out here because the client
 * does not import core at run time (an agent backend should not pull in Postgres drivers).
 *
 * They type what a caller sends (filters, decisions, actions). Answers keep statuses as strings, so that a
 * newer dispatcher with one more state does not make an older client unable to read a run.
 */

export const RunStatus = {
  RUNNING: 'RUNNING',
  AWAITING_APPROVAL: 'AWAITING_APPROVAL',
  COMPENSATING: 'COMPENSATING',
  COMPLETED: 'COMPLETED',
  COMPENSATED: 'COMPENSATED',
  PARTIALLY_COMPENSATED: 'PARTIALLY_COMPENSATED',
  COMMITTED_WITH_REPAIR: 'COMMITTED_WITH_REPAIR',
  MANUAL_INTERVENTION: 'MANUAL_INTERVENTION',
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/**
 * What an approval covers: a whole pivot proposal, one held step outside a pivot, a held compensation, or
 * the renewal of a run's lapsed authority before recovery.
 */
export const ApprovalKind = {
  PIVOT: 'pivot',
  STEP: 'step',
  COMPENSATION: 'compensation',
  RENEWAL: 'renewal',
} as const;
export type ApprovalKind = (typeof ApprovalKind)[keyof typeof ApprovalKind];

/** Only `pending` may be decided; every other status is final. */
export const ApprovalStatus = {
  PENDING: 'pending',
  APPROVED: 'approved',
  REJECTED: 'rejected',
  EXPIRED: 'expired',
  SUPERSEDED: 'superseded',
} as const;
export type ApprovalStatus = (typeof ApprovalStatus)[keyof typeof ApprovalStatus];

/** An operator's decision on an approval. */
export const Decision = { APPROVE: 'approve', REJECT: 'reject' } as const;
export type Decision = (typeof Decision)[keyof typeof Decision];

/** State of a manual-intervention case (core's `ReviewStatus`). */
export const CaseStatus = { OPEN: 'open', RESOLVED: 'resolved' } as const;
export type CaseStatus = (typeof CaseStatus)[keyof typeof CaseStatus];

/** What an operator may do with a case; each is recorded with who and when. */
export const CaseAction = {
  /** The effect exists: the step becomes CONFIRMED with the external ref found by hand (`externalRef`). */
  CONFIRMED: 'confirmed',
  /** The effect does not exist: the step becomes NOT_EXECUTED (sent again if the run goes forward). */
  NOT_EXECUTED: 'not_executed',
  /** Try the step's compensation again (same key): the run goes back to the compensator. */
  RETRY_COMPENSATION: 'retry_compensation',
  /** Nothing more for the harness to do: the run's cases close and the run keeps its status. */
  RESOLVE_RUN: 'resolve_run',
} as const;
export type CaseAction = (typeof CaseAction)[keyof typeof CaseAction];

/**
 * A queued correction: sent by a person (with its own key) or dismissed. `sending`: a send holds a lease and
 * may be under way; `unknown`: it may have gone out, until the email lookup by its key settles it. Neither
 * can be edited or dismissed.
 */
export const CorrectionStatus = {
  OPEN: 'open',
  SENDING: 'sending',
  UNKNOWN: 'unknown',
  SENT: 'sent',
  DISMISSED: 'dismissed',
} as const;
export type CorrectionStatus = (typeof CorrectionStatus)[keyof typeof CorrectionStatus];
