// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

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
