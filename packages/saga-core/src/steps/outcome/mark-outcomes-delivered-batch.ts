import { sql } from 'kysely';
import type { SagaDb, SagaTrx } from '../../db/connect.js';
import { preparedAs } from '../../db/prepared-statements.js';
import type { StepRow } from '../../db/schema.js';
import { SETTLED_STEP_STATUSES } from '../step-status.js';
import { stepRowColumns } from '../step-row-columns.js';
import { cursorAfterMarks, markDeliveredUnderLock } from './mark-outcome-delivered.js';

/** One response that carried a step's settled outcome to its caller. */
export interface DeliveredOutcome {
  readonly tenantId: string;
  readonly runId: string;
  readonly stepIdx: number;
}

/**
 * {@link markOutcomeDelivered} for several steps (of one or many runs) in one commit, and the read of each
 * step as it then is: every step of `items` that is settled and not yet delivered is marked, the runs'
 * cursors move past what is delivered, and each item's step row is returned (in order; undefined when the
 * tenant has no such step). A step that is not settled is only read: a wake that finds the step still on its
 * way writes nothing, and one that finds it settled marks it in the same round trip. Every value is a bound
 * parameter.
 *
 * The common case is ONE autocommit statement (one round trip, one commit):
 *
 * ```sql
 * WITH d      AS MATERIALIZED (unnest($tenants, $runs, $steps) WITH ORDINALITY LEFT JOIN saga_log …),
 *      lk     AS MATERIALIZED (SELECT run_id, xmin = <xmin of the run's row in the snapshot> AS fresh
 *                               FROM runs WHERE <a step of d is settled, not delivered>
 *                              ORDER BY run_id FOR UPDATE),                           -- lockRun, key order
 *      marked AS (UPDATE saga_log SET outcome_delivered = true … for fresh runs),
 *      moved  AS (UPDATE runs r SET cursor = <cursorAfterMarks> … for fresh runs)
 * SELECT d.*, just marked, stale FROM d …;            -- each item's step as this snapshot read it
 * ```
 *
 * The cursor rule needs a snapshot that sees every delivery of the run committed before the lock was granted,
 * and a statement's snapshot is taken when it starts, before it waits for the lock. So the statement checks
 * what a second statement would have given it: every delivery (this statement, `markDeliveredUnderLock`)
 * writes the run's row in the same commit as its marks, so a delivery that committed after this snapshot
 * left a newer version of the row, and `FOR UPDATE` (READ COMMITTED) locks that newest version while a
 * scalar subquery still reads the snapshot's. Equal `xmin`: the same version, no delivery of the run missed,
 * and the lock keeps later ones out until this commit. Unequal: the run is stale and nothing is written for
 * it; its items take the transaction form (lock, then `markDeliveredUnderLock` in a later statement, then
 * the read), as they did before there was a one-statement form. A lock that only locked (an intake's
 * `lockRun`) leaves the version as it was: such a transaction adds steps that are not delivered, which the
 * cursor rule does not need to see.
 *
 * Runs are locked in `run_id` order in both forms, as by the grouped intake, so concurrent groups cannot
 * deadlock. The rule this form keeps with `markOutcomeDelivered`: README.md here.
 */
export async function markOutcomesDelivered(
  db: SagaDb,
  items: readonly DeliveredOutcome[],
): Promise<readonly (StepRow | undefined)[]> {
  if (items.length === 0) return [];
  const settled = [...SETTLED_STEP_STATUSES];
  const r = await sql<
    StepRow & { readonly ord: string; readonly just_marked: boolean; readonly stale: boolean }
  >`${preparedAs('saga_mark_outcomes_delivered')}
    WITH d AS MATERIALIZED (
      SELECT d.ord, ${stepRowColumns('s')} FROM unnest(${items.map((i) => i.tenantId)}::text[], ${items.map((i) => i.runId)}::text[],
                                    ${items.map((i) => i.stepIdx)}::int[]) WITH ORDINALITY AS d(tenant_id, run_id, step_idx, ord)
        LEFT JOIN saga_log s ON s.run_id = d.run_id AND s.step_idx = d.step_idx AND s.tenant_id = d.tenant_id
    ), lk AS MATERIALIZED (
      SELECT r.run_id, r.xmin = (SELECT v.xmin FROM runs v WHERE v.run_id = r.run_id) AS fresh
        FROM runs r
       WHERE r.run_id IN (SELECT d.run_id FROM d
                           WHERE d.status = ANY(${settled}::text[]) AND NOT d.outcome_delivered)
       ORDER BY r.run_id FOR UPDATE OF r
    ), marked AS (
      UPDATE saga_log s SET outcome_delivered = true
        FROM d JOIN lk ON lk.run_id = d.run_id AND lk.fresh
       WHERE s.run_id = d.run_id AND s.step_idx = d.step_idx
         AND s.status = ANY(${settled}::text[]) AND NOT s.outcome_delivered
      RETURNING s.run_id, s.step_idx
    ), moved AS (
      UPDATE runs r SET cursor = ${cursorAfterMarks()}
        FROM lk WHERE r.run_id = lk.run_id AND lk.fresh
      RETURNING r.run_id
    )
    SELECT d.*, m.step_idx IS NOT NULL AS just_marked, coalesce(NOT lk.fresh, false) AS stale
      FROM d
      LEFT JOIN marked m ON m.run_id = d.run_id AND m.step_idx = d.step_idx
      LEFT JOIN lk ON lk.run_id = d.run_id
     ORDER BY d.ord`.execute(db);
  // A LEFT JOIN that found no step gives a row of nulls.
  const out: (StepRow | undefined)[] = r.rows.map(({ ord: _o, just_marked, stale: _s, ...row }) =>
    (row.run_id as string | null) === null
      ? undefined
      : { ...row, outcome_delivered: row.outcome_delivered || just_marked },
  );
  const stale = items.filter((_, i) => r.rows[i]!.stale);
  if (stale.length === 0) return out;
  const again = await db.transaction().execute((trx) => markUnderLocks(trx, stale));
  items.forEach((item, i) => {
    if (r.rows[i]!.stale) out[i] = again.get(`${item.runId}\u0000${item.stepIdx}`);
  });
  return out;
}

/**
 * The transaction form, for runs whose lock the one statement found stale: the locks first (a statement of
 * their own, so the next one's snapshot is taken after they were granted), then the marks and the cursors,
 * then the steps as they now are.
 *
 * ```sql
 * SELECT 1 FROM runs WHERE (run_id, tenant_id) IN (…) ORDER BY run_id FOR UPDATE;   -- lockRun, in key order
 * <markDeliveredUnderLock: the marks and the cursor moves, one statement>
 * SELECT * FROM saga_log WHERE (run_id, step_idx, tenant_id) IN (…);
 * ```
 */
async function markUnderLocks(
  trx: SagaTrx,
  items: readonly DeliveredOutcome[],
): Promise<ReadonlyMap<string, StepRow>> {
  const runs = [...new Map(items.map((i) => [i.runId, i.tenantId])).entries()];
  await sql`
    SELECT 1 FROM runs r
      JOIN unnest(${runs.map(([runId]) => runId)}::text[], ${runs.map(([, t]) => t)}::text[])
        AS t(run_id, tenant_id)
        ON r.run_id = t.run_id AND r.tenant_id = t.tenant_id
     ORDER BY r.run_id FOR UPDATE OF r`.execute(trx);
  await markDeliveredUnderLock(trx, items);
  const rows = await sql<StepRow>`
    SELECT s.* FROM saga_log s
      JOIN unnest(${items.map((i) => i.runId)}::text[], ${items.map((i) => i.stepIdx)}::int[],
                  ${items.map((i) => i.tenantId)}::text[]) AS d(run_id, step_idx, tenant_id)
        ON s.run_id = d.run_id AND s.step_idx = d.step_idx AND s.tenant_id = d.tenant_id`.execute(trx);
  return new Map(rows.rows.map((row) => [`${row.run_id}\u0000${row.step_idx}`, row]));
}
