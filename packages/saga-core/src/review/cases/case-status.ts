// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

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
