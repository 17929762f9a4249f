/**
 * Every status of agent-saga, each defined once. The transition tables and the HTTP schemas are derived from
 * these objects; nothing else in the code spells a status out. The migrations are the exception, on purpose:
 * each spells out the lists it writes into CHECK constraints and partial indexes as they stood, so that what
 * it creates never changes (a new value here needs a new migration). `packages/saga-core/test/migrate.test.ts`
 * checks that the database's lists and these objects agree.
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
  StepStatus.REJECTED,
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

/**
 * The run statuses that are not terminal (RUNNING, AWAITING_APPROVAL, COMPENSATING): a run in one of them
 * still has work or a decision ahead. Derived from {@link TERMINAL_RUN_STATUSES}, so every run status is in
 * exactly one of the two lists. The predicate of the partial index `runs_open` (which migration 0001 spells
 * out as it stood; `migrate.test.ts` checks the two agree): its readers (the stuck-run scan, the run gauges)
 * put these values in their SQL as literals, so the planner can use the index.
 */
export const OPEN_RUN_STATUSES: readonly RunStatus[] = Object.values(RunStatus).filter(
  (s) => !(TERMINAL_RUN_STATUSES as readonly RunStatus[]).includes(s),
);

/**
 * Run statuses whose forward steps may still be sent: the one rule the executor's claim, a re-dispatch and
 * a held step's decision share. A COMPENSATING or terminal run sends nothing more forward: a step of it that
 * was never claimed is withdrawn (NOT_EXECUTED), an approval of it is refused (RUN_NOT_RUNNING).
 * AWAITING_APPROVAL is listed because a pivot waits with every earlier step settled: nothing it still holds
 * is a forward step on its way, and its pivot's own steps are released only by the approval.
 */
export const EXECUTING_RUN_STATUSES = [
  RunStatus.RUNNING,
  RunStatus.AWAITING_APPROVAL,
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
  /** A change of the run's own status (`step_idx` null): `from`/`to` are {@link RunStatus} values. */
  RUN_TRANSITION: 'run_transition',
  /**
   * A person's decision, with who (`actor`) and when: an approval decided, a case resolved, a correction
   * sent or dismissed. `step_idx` is the step it concerns, or null for the whole run.
   */
  DECISION: 'decision',
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

/**
 * State of a manual-intervention case (`cases`); its state machine is `CASE_TRANSITIONS`
 * (case-transitions.ts). Corrections have their own {@link CorrectionStatus}.
 */
export const ReviewStatus = {
  /** Waiting for a person. */
  OPEN: 'open',
  /** A person dealt with it. */
  RESOLVED: 'resolved',
} as const;
export type ReviewStatus = (typeof ReviewStatus)[keyof typeof ReviewStatus];

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

/**
 * A correction queued for a person: sent (through the intent log, with its own key) or dismissed. The
 * state machine, with each state's legal exits, is `CORRECTION_TRANSITIONS` (correction-transitions.ts).
 */
export const CorrectionStatus = {
  /** Waiting for a person: editable, sendable, dismissable. */
  OPEN: 'open',
  /** A person asked to send it; its key is fixed and a send holds a lease (`lease_until`): it may be under way. */
  SENDING: 'sending',
  /** A send may have reached the vendor (timeout, 5xx, a sender gone): settled only by the lookup by key. */
  UNKNOWN: 'unknown',
  /** A person sent it; the message reached the vendor (its ref is stored). */
  SENT: 'sent',
  /** A person decided not to send it. */
  DISMISSED: 'dismissed',
} as const;
export type CorrectionStatus = (typeof CorrectionStatus)[keyof typeof CorrectionStatus];

/** What an operator may do with a manual-intervention case; each is recorded as a decision event. */
export const CaseAction = {
  /** The effect exists: the step becomes CONFIRMED with the external ref found by hand. */
  CONFIRMED: 'confirmed',
  /** The effect does not exist: the step becomes NOT_EXECUTED (re-sent if its run still goes forward). */
  NOT_EXECUTED: 'not_executed',
  /** Try the step's compensation again (same key): the run goes back to the compensator. */
  RETRY_COMPENSATION: 'retry_compensation',
  /** Nothing more for the harness to do: the case is closed and the run keeps its final status. */
  RESOLVE_RUN: 'resolve_run',
} as const;
export type CaseAction = (typeof CaseAction)[keyof typeof CaseAction];

export const valuesOf = <T extends Record<string, string>>(o: T): T[keyof T][] =>
  Object.values(o) as T[keyof T][];
