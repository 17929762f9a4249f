// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

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
