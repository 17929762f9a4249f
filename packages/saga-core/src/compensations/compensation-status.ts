// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

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
