import { sql } from 'kysely';
import pg from 'pg';
import type { SagaDb } from '../db/connect.js';
import { RUN_ID } from './runs.js';
import { SETTLED_STEP_STATUSES } from '../statuses.js';

/** One response that carried a step's settled outcome to its caller. */
export interface DeliveredOutcome {
  readonly tenantId: string;
  readonly runId: string;
  readonly stepIdx: number;
}

/**
 * {@link markOutcomeDelivered} for several steps (of one or many runs) in ONE round trip and one commit:
 * the three statements of the locked form, sent as one simple-protocol query, which Postgres runs as one
 * implicit transaction (all or nothing):
 *
 * ```sql
 * SELECT 1 FROM runs WHERE (run_id, tenant_id) IN (…) ORDER BY run_id FOR UPDATE;   -- lockRun, in key order
 * UPDATE saga_log SET outcome_delivered = true
 *  WHERE (run_id, step_idx) IN (…) AND status IN (<settled>) AND NOT outcome_delivered;
 * UPDATE runs r SET cursor = <first index from the cursor on with no delivered step> WHERE run_id IN (…);
 * ```
 *
 * Why one query string rather than a transaction of three statements: each statement of a multi-statement
 * query still takes its own snapshot (READ COMMITTED), so the cursor update, which runs after the lock is
 * granted, sees every delivery of the run committed before it, exactly as in the locked transaction; but
 * the whole costs one round trip instead of five. The simple protocol takes no parameters, so the values
 * are inlined as literals: run ids are checked against {@link RUN_ID} and quoted with `escapeLiteral`,
 * step indices are integers. Runs are locked in `run_id` order, so concurrent groups cannot deadlock.
 */
export async function markOutcomesDelivered(db: SagaDb, items: readonly DeliveredOutcome[]): Promise<void> {
  if (items.length === 0) return;
  for (const it of items) {
    if (!RUN_ID.test(it.runId)) throw new RangeError(`invalid run id ${JSON.stringify(it.runId)}`);
    if (!Number.isSafeInteger(it.stepIdx) || it.stepIdx < 0)
      throw new RangeError(`invalid step index ${String(it.stepIdx)}`);
  }
  const lit = (s: string): string => pg.escapeLiteral(s);
  const runs = [...new Set(items.map((i) => i.runId))].map(lit).join(', ');
  const runTenants = [...new Set(items.map((i) => `(${lit(i.runId)}, ${lit(i.tenantId)})`))].join(', ');
  const steps = items.map((i) => `(${lit(i.runId)}, ${i.stepIdx})`).join(', ');
  const settled = SETTLED_STEP_STATUSES.map(lit).join(', ');
  const text = `
    SELECT 1 FROM runs WHERE (run_id, tenant_id) IN (${runTenants}) ORDER BY run_id FOR UPDATE;
    UPDATE saga_log SET outcome_delivered = true
     WHERE (run_id, step_idx) IN (${steps}) AND status IN (${settled}) AND NOT outcome_delivered;
    UPDATE runs r SET cursor = (
        SELECT min(g)::int FROM generate_series(r.cursor, r.cursor + (
                 SELECT count(*)::int FROM saga_log s WHERE s.run_id = r.run_id AND s.step_idx >= r.cursor)) g
         WHERE NOT EXISTS (SELECT 1 FROM saga_log s
                            WHERE s.run_id = r.run_id AND s.step_idx = g AND s.outcome_delivered))
     WHERE r.run_id IN (${runs});`;
  await sql.raw(text).execute(db);
}
