import { sql, type RawBuilder } from 'kysely';

/**
 * The one writer of `saga_log.compensation_status`: the step's copy of its compensation's status, so the
 * step view and its readers need no join. The rule: every statement that writes `compensations.status`
 * writes the same status on the step `(run_id, step_idx)`, in the same statement or transaction, with this
 * fragment and no other text:
 *
 * ```sql
 * UPDATE saga_log s SET compensation_status = m.status FROM $moved m
 *  WHERE s.run_id = m.run_id AND s.step_idx = m.step_idx
 * ```
 *
 * `moved` is a FROM item with the columns `run_id`, `step_idx` and `status` of the rows just moved: the
 * name of a data-modifying CTE's result in a set-based statement (`sql.table('claimed')`), or one row
 * (`transitionCompensation`). A row the move did not match is absent from `moved`, so its step keeps its
 * status: the mirror never runs ahead of the compensation.
 */
export function mirrorCompensationStatus(moved: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`UPDATE saga_log s SET compensation_status = m.status
      FROM ${moved} m
     WHERE s.run_id = m.run_id AND s.step_idx = m.step_idx`;
}
