// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

/** Per-step state of its stored compensation (the compensator issue drives these). */
export const CompensationStatus = {
  PENDING: 'pending',
  /**
   * Held before its first send for a person's decision (migration 0014): it moves money above the run
   * policy's `approveMoneyAbove`, or deletes under `approveDeletions`. Approved → pending (sent once, with
   * its own key); rejected or expired → failed for good (a case; the run ends as the finish rules say).
   */
  AWAITING_APPROVAL: 'awaiting_approval',
  RUNNING: 'running',
  COMPENSATED: 'compensated',
  UNKNOWN: 'unknown',
  FAILED: 'failed',
  SKIPPED: 'skipped',
} as const;
export type CompensationStatus = (typeof CompensationStatus)[keyof typeof CompensationStatus];
