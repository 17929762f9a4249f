import type { SagaTrx } from '../../db/connect.js';
import type { CorrectionRow } from '../../db/schema.js';
import { correctionHash } from '../../util/canonical-json.js';
import { SEND_UNDER_WAY } from './correction-transitions.js';
import {
  ApprovalDecidedError,
  ApprovalHashMismatchError,
  CorrectionSendingError,
  InvalidCorrectionTransitionError,
} from '../../errors/errors.js';
import { lockReviewItem } from '../lock-review-item.js';
import { CorrectionStatus } from './correction-status.js';
import type { Decider } from '../decider.js';

/**
 * Who decides on a correction: an operator of this tenant (the token's name is the actor, its id `tokenId`,
 * see {@link Decider}); an API `Principal` is one as it is.
 */
export interface CorrectionDecider extends Decider {
  readonly tenantId: string;
}

/**
 * Locks a correction of this tenant (the run first, as every decision does) and refuses what no decision
 * may do to it, before any write: missing or another tenant's (NotFoundError), sent or dismissed
 * (ApprovalDecidedError), edited since the operator read it (ApprovalHashMismatchError, when `hash` is
 * given). A correction whose send is under way or unknown is returned as is: each decision says what it
 * does then.
 */
export async function lockCorrection(
  trx: SagaTrx,
  id: string,
  who: CorrectionDecider,
  hash: string | null,
): Promise<CorrectionRow> {
  await lockReviewItem(trx, 'corrections', id, who.tenantId);
  const c = await trx.selectFrom('corrections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  if (c.status === CorrectionStatus.SENT || c.status === CorrectionStatus.DISMISSED)
    throw new ApprovalDecidedError(`correction ${id}`, c.status);
  if (hash !== null && hash !== correctionHash(c.command))
    throw new ApprovalHashMismatchError(`correction ${id}`, hash);
  return c;
}

/** Refuses to change a correction whose send has started and is not settled (CorrectionSendingError). */
export function refuseWhileSending(c: CorrectionRow): void {
  if (SEND_UNDER_WAY.includes(c.status)) throw new CorrectionSendingError(String(c.id), c.status);
}

/**
 * A compare-and-set lost under the decision's own locks cannot happen; should it, it is the refusal of the
 * state the row was in: CorrectionSendingError for a send under way, ApprovalDecidedError otherwise.
 */
export function asDecisionRefusal(id: string) {
  return (err: unknown): never => {
    if (err instanceof InvalidCorrectionTransitionError && err.from !== null)
      throw SEND_UNDER_WAY.includes(err.from as CorrectionStatus)
        ? new CorrectionSendingError(id, err.from)
        : new ApprovalDecidedError(`correction ${id}`, err.from);
    throw err;
  };
}
