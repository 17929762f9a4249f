// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

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
