import { sql } from 'kysely';
import type { SagaDb, SagaTrx } from '../../db/connect.js';
import type { CorrectionRow } from '../../db/schema.js';
import { InvalidCorrectionTransitionError } from '../../errors/errors.js';
import type { StoredToolError } from '../../steps/outcome/classify-tool-error.js';
import { CorrectionStatus } from './correction-status.js';
import type { ToolEffect } from '../../tools/define-tool.js';
import { correctionSendKey } from './correction-send-key.js';
import { CLEAR_SEND_LEASE, transitionCorrection } from './transition-correction.js';

export interface StartSendInput {
  /** The correction as read under its run's and its own lock (`lockReviewItem`), `open`. */
  readonly correction: CorrectionRow;
  /** The tool of the step the correction answers: part of the key. */
  readonly forwardTool: string;
  /** This process's lease owner id. */
  readonly owner: string;
  /** The lease, from `correctionLeaseMs`: written as `now() + leaseMs` by the database. */
  readonly leaseMs: number;
  readonly actor: string;
  /** The sending operator's token id, kept as `decided_by_token` beside `actor` (see `Decider`). */
  readonly tokenId?: string | null | undefined;
  readonly comment: string | null;
}

/**
 * The intent of a send, before the vendor is called: `open → sending` by compare-and-set (on the status and
 * the message version read under the lock), in the caller's transaction, fixing in the same statement the
 * key of this version ({@link correctionSendKey}), the lease (`now() + leaseMs`) and when the send started,
 * both by the database's clock. From the commit on, edit and dismiss are refused and a crash leaves a row
 * the sweep settles by lookup (`settleStaleCorrectionSends`), never an open one sent again blindly.
 */
export async function startCorrectionSend(trx: SagaTrx, s: StartSendInput): Promise<CorrectionRow> {
  const c = s.correction;
  const key = correctionSendKey(c.run_id, c.step_idx, s.forwardTool, c.version);
  return transitionCorrection(trx, {
    id: String(c.id),
    to: CorrectionStatus.SENDING,
    onlyFrom: [CorrectionStatus.OPEN],
    version: c.version,
    cause: `correction send requested by ${s.actor}`,
    actor: s.actor,
    detail: { key, version: c.version, leaseMs: s.leaseMs, owner: s.owner },
    patch: {
      idempotency_key: key,
      lease_owner: s.owner,
      lease_until: sql<Date>`now() + make_interval(secs => ${s.leaseMs / 1000}::float8)`,
      send_started_at: sql<Date>`now()`,
      external_ref: null,
      decided_by: s.actor,
      decided_by_token: s.tokenId ?? null,
      decided_at: sql<Date>`now()`,
      comment: s.comment,
    },
  });
}

/** What the vendor call of a send came to, as the sender saw it. */
export type CorrectionSendOutcome =
  | { readonly kind: 'sent'; readonly effect: ToolEffect; readonly durationMs: number }
  /** The vendor said no: nothing was sent. */
  | { readonly kind: 'refused'; readonly error: StoredToolError }
  /** Nobody knows (timeout, 5xx, reset): the lookup by key decides later. */
  | { readonly kind: 'unknown'; readonly error: StoredToolError };

export interface RecordSendInput {
  readonly id: string;
  /** The key the send went out with. */
  readonly key: string;
  readonly owner: string;
  readonly outcome: CorrectionSendOutcome;
}

/**
 * Records a send's outcome by compare-and-set, outside the transaction of the call:
 * - `sent`: `sending | unknown → sent` for this key (an effect under the key exists, whoever holds the
 *   lease now: a late answer after the sweep moved it to unknown is still the evidence);
 * - `refused`: `sending → open`, only under this sender's lease (nothing was sent; the person may send
 *   again or edit);
 * - `unknown`: `sending → unknown`, only under this sender's lease.
 * Resolves to null when the row had moved meanwhile (the sweep settled it): the caller reads it again.
 */
export async function recordCorrectionSend(db: SagaDb, r: RecordSendInput): Promise<CorrectionRow | null> {
  try {
    return await db.transaction().execute((trx) => {
      const o = r.outcome;
      switch (o.kind) {
        case 'sent':
          return transitionCorrection(trx, {
            id: r.id,
            to: CorrectionStatus.SENT,
            key: r.key,
            cause: 'correction send: the vendor accepted it',
            detail: { key: r.key, externalRef: o.effect.externalRef, durationMs: Math.round(o.durationMs) },
            patch: { ...CLEAR_SEND_LEASE, external_ref: o.effect.externalRef },
          });
        case 'refused':
          return transitionCorrection(trx, {
            id: r.id,
            to: CorrectionStatus.OPEN,
            onlyFrom: [CorrectionStatus.SENDING],
            leaseOwner: r.owner,
            key: r.key,
            cause: 'correction send: the vendor refused it; nothing was sent',
            detail: { key: r.key, error: o.error },
            patch: { ...CLEAR_SEND_LEASE, decided_by: null, decided_by_token: null, decided_at: null },
          });
        case 'unknown':
          return transitionCorrection(trx, {
            id: r.id,
            to: CorrectionStatus.UNKNOWN,
            onlyFrom: [CorrectionStatus.SENDING],
            leaseOwner: r.owner,
            key: r.key,
            cause: 'correction send: outcome unknown; settled by the lookup by key',
            detail: { key: r.key, error: o.error },
            patch: CLEAR_SEND_LEASE,
          });
        default: {
          const never: never = o;
          throw new Error(`unhandled send outcome ${JSON.stringify(never)}`);
        }
      }
    });
  } catch (err) {
    if (err instanceof InvalidCorrectionTransitionError) return null;
    throw err;
  }
}
