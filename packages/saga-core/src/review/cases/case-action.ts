// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

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
