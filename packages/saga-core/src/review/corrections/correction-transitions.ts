import { CorrectionStatus } from './correction-status.js';

/**
 * The state machine of a correction (`corrections.status`). Each key is a target; its value the only
 * sources. A correction is born `open` (the compensator queues it when it unwinds a run).
 *
 * - open: waiting for a person. Exits to sending (a person asked to send it: its key is fixed and a lease
 *   taken, in one transaction, before the vendor is called) and dismissed. An edit is the move open → open:
 *   a new version of the message, hence a new key, by compare-and-set on `open` and the version read
 *   (`reviseCorrection`), never while a send is under way.
 * - sending: a sender holds a lease (`lease_owner`, `lease_until`, on the database's clock) and may be
 *   calling the vendor. Nothing else may touch it: edit and dismiss are refused (409 CORRECTION_SENDING).
 *   Exits to sent (the vendor answered), open (the vendor refused: nothing was sent), unknown (nobody knows,
 *   or the lease ran out with the sender gone).
 * - unknown: the message may have gone out. Exits only by the email tool's lookup by the key: sent (found,
 *   with its evidence) or open (not found, believed only past the tool's `lookupLagMs` since the send
 *   started and a re-check: the same key may then be sent again). Edit and dismiss are refused meanwhile.
 * - sent, dismissed: final.
 */
export const CORRECTION_TRANSITIONS = {
  [CorrectionStatus.OPEN]: [CorrectionStatus.OPEN, CorrectionStatus.SENDING, CorrectionStatus.UNKNOWN],
  [CorrectionStatus.SENDING]: [CorrectionStatus.OPEN],
  [CorrectionStatus.UNKNOWN]: [CorrectionStatus.SENDING],
  [CorrectionStatus.SENT]: [CorrectionStatus.SENDING, CorrectionStatus.UNKNOWN],
  [CorrectionStatus.DISMISSED]: [CorrectionStatus.OPEN],
} as const satisfies Record<CorrectionStatus, readonly CorrectionStatus[]>;

/** The statuses a correction may move to `to` from. */
export function allowedCorrectionSources(to: CorrectionStatus): readonly CorrectionStatus[] {
  return CORRECTION_TRANSITIONS[to];
}

export function isLegalCorrectionTransition(from: CorrectionStatus, to: CorrectionStatus): boolean {
  return (CORRECTION_TRANSITIONS[to] as readonly CorrectionStatus[]).includes(from);
}

/** A send has started and not ended: the message must not change or be dismissed (409 CORRECTION_SENDING). */
export const SEND_UNDER_WAY: readonly CorrectionStatus[] = [
  CorrectionStatus.SENDING,
  CorrectionStatus.UNKNOWN,
];
