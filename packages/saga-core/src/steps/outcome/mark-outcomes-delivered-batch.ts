import { sql } from 'kysely';
import type { SagaDb } from '../../db/connect.js';
import { preparedAs } from '../../db/prepared-statements.js';
import type { StepRow } from '../../db/schema.js';
import { SETTLED_STEP_STATUSES } from '../step-status.js';
import { stepRowColumns } from '../step-row-columns.js';

/** One response that carried a step's settled outcome to its caller. */
export interface DeliveredOutcome {
  readonly tenantId: string;
  readonly runId: string;
  readonly stepIdx: number;
}

/**
 * {@link markOutcomeDelivered} for several steps (of one or many runs) in ONE autocommit statement (one round
 * trip, one commit), and the read of each step as it then is: every step of `items` that is settled and not
 * yet delivered is marked, and each item's step row is returned (in order; undefined when the tenant has no
 * such step). A step that is not settled is only read: a wake that finds the step still on its way writes
 * nothing, and one that finds it settled marks it in the same round trip. Every value is a bound parameter.
 *
 * ```sql
 * WITH d      AS MATERIALIZED (unnest($tenants, $runs, $steps) WITH ORDINALITY LEFT JOIN saga_log …),
 *      marked AS (UPDATE saga_log SET outcome_delivered = true … settled, not delivered RETURNING …)
 * SELECT d.*, just marked FROM d …;                    -- each item's step as this snapshot read it
 * ```
 *
 * No run is locked or written: the cursor is computed from the marks (`runs/run-cursor.ts`, migration 0024),
 * so concurrent deliveries of one run's steps do not wait for each other. The rule this form keeps with
 * `markOutcomeDelivered`: README.md here.
 */
export async function markOutcomesDelivered(
  db: SagaDb,
  items: readonly DeliveredOutcome[],
): Promise<readonly (StepRow | undefined)[]> {
  if (items.length === 0) return [];
  const r = await sql<StepRow & { readonly ord: string; readonly just_marked: boolean }>`${preparedAs(
    'saga_mark_outcomes_delivered',
  )}
    WITH d AS MATERIALIZED (
      SELECT d.ord, ${stepRowColumns('s')} FROM unnest(${items.map((i) => i.tenantId)}::text[], ${items.map((i) => i.runId)}::text[],
                                    ${items.map((i) => i.stepIdx)}::int[]) WITH ORDINALITY AS d(tenant_id, run_id, step_idx, ord)
        LEFT JOIN saga_log s ON s.run_id = d.run_id AND s.step_idx = d.step_idx AND s.tenant_id = d.tenant_id
    ), marked AS (
      UPDATE saga_log s SET outcome_delivered = true
        FROM d
       WHERE s.run_id = d.run_id AND s.step_idx = d.step_idx
         AND s.status = ANY(${[...SETTLED_STEP_STATUSES]}::text[]) AND NOT s.outcome_delivered
      RETURNING s.run_id, s.step_idx
    )
    SELECT d.*, m.step_idx IS NOT NULL AS just_marked
      FROM d
      LEFT JOIN marked m ON m.run_id = d.run_id AND m.step_idx = d.step_idx
     ORDER BY d.ord`.execute(db);
  // A LEFT JOIN that found no step gives a row of nulls.
  return r.rows.map(({ ord: _o, just_marked, ...row }) =>
    (row.run_id as string | null) === null
      ? undefined
      : { ...row, outcome_delivered: row.outcome_delivered || just_marked },
  );
}
