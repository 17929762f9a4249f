import type { SagaTrx } from '../../db/connect.js';
import type { CorrectionRow } from '../../db/schema.js';
import { correctionHash } from '../../util/canonical-json.js';
import {
  asDecisionRefusal,
  lockCorrection,
  refuseWhileSending,
  type CorrectionDecider,
} from './lock-correction.js';
import { reviseCorrection } from './revise-correction.js';

export interface CorrectionEdit {
  /** The hash of the message the operator read (`correctionHash`): an edit of a newer one is refused. */
  readonly hash: string;
  /** The message's new template variables. */
  readonly vars: Record<string, unknown>;
}

/**
 * An operator's edit of a correction's template variables, in the caller's transaction: a new version
 * with a new hash (and, when sent, a new key), never a silent change. Refused before any write: missing or
 * another tenant's, sent or dismissed, a stale hash (see `lockCorrection`), and a send under way or unknown
 * (CorrectionSendingError: that message may be out).
 */
export async function editCorrection(
  trx: SagaTrx,
  id: string,
  who: CorrectionDecider,
  edit: CorrectionEdit,
): Promise<CorrectionRow> {
  const c = await lockCorrection(trx, id, who, edit.hash);
  refuseWhileSending(c);
  const command = { ...c.command, vars: edit.vars };
  return reviseCorrection(trx, {
    id,
    version: c.version,
    command,
    actor: who.actor,
    detail: { previousHash: edit.hash, hash: correctionHash(command) },
  }).catch(asDecisionRefusal(id));
}
