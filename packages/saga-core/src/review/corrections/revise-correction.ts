import { sql } from 'kysely';
import type { SagaTrx } from '../../db/connect.js';
import type { CorrectionRow } from '../../db/schema.js';
import { CorrectionStatus } from './correction-status.js';
import { transitionCorrection } from './transition-correction.js';

export interface ReviseInput {
  readonly id: string;
  /** The version of the message being edited, as read under the row's lock. */
  readonly version: number;
  /** The new message. */
  readonly command: Record<string, unknown>;
  readonly actor: string;
  readonly detail?: Record<string, unknown>;
}

/**
 * An edit: a new version of the message, the move `open → open` of `CORRECTION_TRANSITIONS`, by
 * compare-and-set on `open` and the version read (never while a send is under way or unknown: that message
 * may be out). The version goes up by one, so the next send has its own key (`correctionSendKey`), and the
 * key of the previous version's send is cleared from the row (it stays in the events). Appends a DECISION
 * event `open → open`. Zero rows: `InvalidCorrectionTransitionError`.
 */
export async function reviseCorrection(trx: SagaTrx, r: ReviseInput): Promise<CorrectionRow> {
  return transitionCorrection(trx, {
    id: r.id,
    to: CorrectionStatus.OPEN,
    onlyFrom: [CorrectionStatus.OPEN],
    version: r.version,
    cause: `correction edited by ${r.actor}`,
    detail: { version: r.version + 1, ...r.detail },
    actor: r.actor,
    patch: {
      command: JSON.stringify(r.command),
      version: sql<number>`version + 1`,
      idempotency_key: null,
      send_started_at: null,
    },
  });
}
