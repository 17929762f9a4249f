import { sql } from 'kysely';
import type { SagaTrx } from '../../db/connect.js';
import type { CorrectionRow } from '../../db/schema.js';
import { CorrectionStatus } from './correction-status.js';
import {
  asDecisionRefusal,
  lockCorrection,
  refuseWhileSending,
  type CorrectionDecider,
} from './lock-correction.js';
import { transitionCorrection } from './transition-correction.js';

/**
 * An operator dismisses a correction, in the caller's transaction: a person decided the customer needs no
 * message (`open → dismissed`, with who, when and their comment). Refused before any write: missing or
 * another tenant's, sent or dismissed already (see `lockCorrection`), and a send under way or unknown
 * (CorrectionSendingError: that message may be out).
 */
export async function dismissCorrection(
  trx: SagaTrx,
  id: string,
  who: CorrectionDecider,
  comment: string | null,
): Promise<CorrectionRow> {
  const c = await lockCorrection(trx, id, who, null);
  refuseWhileSending(c);
  return transitionCorrection(trx, {
    id,
    to: CorrectionStatus.DISMISSED,
    cause: `correction dismissed by ${who.actor}`,
    actor: who.actor,
    detail: { comment },
    patch: {
      decided_by: who.actor,
      decided_by_token: who.tokenId ?? null,
      decided_at: sql<Date>`now()`,
      comment,
    },
  }).catch(asDecisionRefusal(id));
}
