import type { UpdateObject } from 'kysely';
import { CASE_TRANSITIONS } from './case-transitions.js';
import type { SagaTrx } from '../../db/connect.js';
import { compareAndSet } from '../../db/compare-and-set.js';
import type { CaseRow, Database } from '../../db/schema.js';
import { InvalidCaseTransitionError } from '../../errors/errors.js';
import type { ReviewStatus } from './case-status.js';

export interface CaseTransitionInput {
  /** The case's `id`. */
  readonly id: string;
  readonly to: ReviewStatus;
  /** Other columns to set with the status: who resolved it, when, what they did. */
  readonly set?: Omit<UpdateObject<Database, 'cases'>, 'status'>;
}

/**
 * Moves one case to `to` by compare-and-set on the legal sources of `CASE_TRANSITIONS` (only `open` has an
 * exit). Zero rows is an {@link InvalidCaseTransitionError} naming the status the case was really in;
 * nothing is overwritten. Writes no event: the decision that closes cases appends one DECISION event naming
 * every case it closed (`resolveCase`).
 */
export async function transitionCase(trx: SagaTrx, t: CaseTransitionInput): Promise<CaseRow> {
  const r = await compareAndSet(trx, {
    table: 'cases',
    key: { id: t.id },
    transitions: CASE_TRANSITIONS,
    to: t.to,
    set: t.set,
  });
  if (!r.moved) throw new InvalidCaseTransitionError(t.id, r.from, t.to);
  return r.row;
}
