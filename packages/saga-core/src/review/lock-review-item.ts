import type { SagaTrx } from '../db/connect.js';
import { NotFoundError } from '../errors/errors.js';

/** The tables of items a person decides on, each keyed by `id` and owned by one tenant. */
export type ReviewTable = 'approvals' | 'cases' | 'corrections';

const NOUN: Readonly<Record<ReviewTable, string>> = {
  approvals: 'approval',
  cases: 'case',
  corrections: 'correction',
};

/**
 * Locks the run of a review item, then the item's row, in the caller's transaction, and returns the run id.
 * Every decision takes its locks in this order (the run, then the item, then the run's steps, as the intake
 * does: the run, then its steps), so two decisions, an intake and a sweep never wait on each other in a
 * circle. The item's row must still be read again under its lock by the caller (it may have changed).
 *
 * @throws NotFoundError for a missing item or another tenant's: the two are indistinguishable.
 */
export async function lockReviewItem(
  trx: SagaTrx,
  table: ReviewTable,
  id: string,
  tenantId: string,
): Promise<string> {
  const ref = await trx
    .selectFrom(table)
    .select('run_id')
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!ref) throw new NotFoundError(`${NOUN[table]} ${id} not found`);
  await trx.selectFrom('runs').select('run_id').where('run_id', '=', ref.run_id).forUpdate().execute();
  await trx.selectFrom(table).select('run_id').where('id', '=', id).forUpdate().execute();
  return ref.run_id;
}
