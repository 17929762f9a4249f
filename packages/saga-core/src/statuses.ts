/**
 * Every status of agent-saga, each defined once. SQL CHECK constraints, the transition table and the HTTP
 * schemas are derived from these objects; nothing else spells a status out.
 */

/** The class of a tool decides what the harness may do with its effect. */
export const ToolClass = {
  /** Reads only: executed at once, no saga-log row. */
  PURE: 'pure',
  /** Has an exact inverse that leaves no trace anyone outside could see (delete a draft, release a hold). */
  REVERSIBLE: 'reversible',
  /** Can be undone by a second, visible effect (refund a charge, close a ticket). */
  COMPENSATABLE: 'compensatable',
  /** Cannot be undone (an email sent, goods shipped): needs a human before the call. */
  IRREVERSIBLE: 'irreversible',
} as const;
export type ToolClass = (typeof ToolClass)[keyof typeof ToolClass];

export const StepStatus = {
  /** Held for a human decision before anything is sent (irreversible, or no compensation possible). */
  AWAITING_APPROVAL: 'AWAITING_APPROVAL',
  /** Committed intent: the call may be under way. Never means "did not happen". */
  INTENDED: 'INTENDED',
  /** The effect exists in the real system; `external_ref` and `result` are set. */
  CONFIRMED: 'CONFIRMED',
  /** The real system definitively said no; nothing happened. */
  FAILED: 'FAILED',
  /** Nobody knows whether the effect happened (timeout, 5xx, reset, crash). */
  UNKNOWN: 'UNKNOWN',
  /** The reconciler proved, allowing for the system's search lag, that the effect does not exist. */
  NOT_EXECUTED: 'NOT_EXECUTED',
  /** A human refused the call before it was sent. */
  REJECTED: 'REJECTED',
  /** The harness could not settle the step on its own; a person must. */
  MANUAL_INTERVENTION: 'MANUAL_INTERVENTION',
} as const;
export type StepStatus = (typeof StepStatus)[keyof typeof StepStatus];

/** Step statuses whose outcome is settled: the caller may be told and the cursor may move past them. */
export const SETTLED_STEP_STATUSES = [
  StepStatus.CONFIRMED,
  StepStatus.FAILED,
] as const satisfies readonly StepStatus[];

/** Step statuses that a sweep (reconciler, inline lookup) must still resolve. */
export const UNRESOLVED_STEP_STATUSES = [
  StepStatus.INTENDED,
  StepStatus.UNKNOWN,
] as const satisfies readonly StepStatus[];

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

/** The honest terminal states a run may end in. */
export const TERMINAL_RUN_STATUSES = [
  RunStatus.COMPLETED,
  RunStatus.COMPENSATED,
  RunStatus.PARTIALLY_COMPENSATED,
  RunStatus.COMMITTED_WITH_REPAIR,
  RunStatus.MANUAL_INTERVENTION,
] as const satisfies readonly RunStatus[];

/** Per-step state of its stored compensation (the compensator issue drives these). */
export const CompensationStatus = {
  PENDING: 'pending',
  RUNNING: 'running',
  COMPENSATED: 'compensated',
  UNKNOWN: 'unknown',
  FAILED: 'failed',
  SKIPPED: 'skipped',
} as const;
export type CompensationStatus = (typeof CompensationStatus)[keyof typeof CompensationStatus];

/** Who could see an effect. Internal audiences are corrected silently; `customer` needs a human. */
export const Audience = {
  AGENT: 'agent',
  SUPPORT_TEAM: 'support_team',
  FINANCE: 'finance',
  CUSTOMER: 'customer',
} as const;
export type Audience = (typeof Audience)[keyof typeof Audience];

export const TokenRole = { AGENT: 'agent', OPERATOR: 'operator' } as const;
export type TokenRole = (typeof TokenRole)[keyof typeof TokenRole];

/** Kinds of rows in `step_events`. */
export const StepEventKind = {
  /** A change of status, written in the same transaction as the compare-and-set update. */
  TRANSITION: 'transition',
  /** The executor sent the call to the real system (attempt number in `detail`). */
  ATTEMPT: 'attempt',
  /** The model called the step again (its possibly reworded arguments in `detail`). */
  RETRY_CALL: 'retry_call',
  /** A lookup by key in the real system, and what it saw. */
  LOOKUP: 'lookup',
  /**
   * The step's compensation: a change of its compensation status (`from`/`to` are {@link
   * CompensationStatus} values) or an attempt or lookup of the compensation tool (`from`/`to` null).
   */
  COMPENSATION: 'compensation',
} as const;
export type StepEventKind = (typeof StepEventKind)[keyof typeof StepEventKind];

/** State of an email draft the harness keeps itself (`email_drafts`, written by the email connector). */
export const EmailDraftStatus = {
  /** Stored, not sent; nobody outside the harness has seen it. */
  DRAFT: 'draft',
  /** Deleted by `delete_email_draft`; the row stays so the deletion can be found by its key. */
  DELETED: 'deleted',
} as const;
export type EmailDraftStatus = (typeof EmailDraftStatus)[keyof typeof EmailDraftStatus];

/** State of an item queued for people: a correction to review, or a manual-intervention case. */
export const ReviewStatus = {
  /** Waiting for a person. */
  OPEN: 'open',
  /** A person dealt with it. */
  RESOLVED: 'resolved',
} as const;
export type ReviewStatus = (typeof ReviewStatus)[keyof typeof ReviewStatus];

export const valuesOf = <T extends Record<string, string>>(o: T): T[keyof T][] =>
  Object.values(o) as T[keyof T][];
