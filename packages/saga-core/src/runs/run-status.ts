// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

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
 * no executor holds is withdrawn (NOT_EXECUTED, or UNKNOWN when an earlier send under its key may still
 * commit), an approval of it is refused (RUN_NOT_RUNNING).
 * AWAITING_APPROVAL is listed because a pivot waits with every earlier step settled: nothing it still holds
 * is a forward step on its way, and its pivot's own steps are released only by the approval.
 */
export const EXECUTING_RUN_STATUSES = [
  RunStatus.RUNNING,
  RunStatus.AWAITING_APPROVAL,
] as const satisfies readonly RunStatus[];
