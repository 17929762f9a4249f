import { sql } from 'kysely';
import {
  preparedAs,
  stepRowColumns,
  type CompensationRow,
  type RunPolicy,
  type RunStatus,
  type SagaDb,
  type StepRow,
} from '@agent-saga/core';

/** The run row as an unwind's pass reads it: its status and reason, and what its recovery rules need. */
export interface RunHead {
  readonly status: RunStatus;
  readonly status_reason: string | null;
  readonly tenant_id: string;
  /** The run's policy (its recovery rules: approvals of money and deletions, the authority's TTL). */
  readonly policy: RunPolicy;
  /** When the run's authority was last granted (migration 0013). */
  readonly authority_at: Date;
  /** The definition the run is bound to (migration 0013); null: unbound, no invariant to check. */
  readonly definition_name: string | null;
}

/** What one pass of an unwind reads of its run before it decides anything. */
export interface RunState {
  /** The run's status and reason; undefined for a run that does not exist. */
  readonly run: RunHead | undefined;
  /** Its steps, in step order. */
  readonly steps: readonly StepRow[];
  /** Its compensations by step. */
  readonly comps: Map<number, CompensationRow>;
  /**
   * The database's `now()` read with the compensations, so that every lease and due time is judged against
   * the clock of the instant the rows were read, never this process's.
   */
  readonly dbNow: Date;
}

/**
 * Reads the state of every run in `runIds` (ids are distinct) in two statements, whatever their number,
 * so that the passes of concurrent unwinds share their round trips (see `unwind-groups.ts`):
 *
 * ```sql
 * SELECT r.run_id AS of_run, r.status AS run_status, r.status_reason AS run_status_reason,
 *        r.tenant_id AS run_tenant_id, r.policy AS run_policy, r.authority_at AS run_authority_at,
 *        s.<STEP_ROW_COLUMNS>
 *   FROM runs r LEFT JOIN LATERAL (SELECT * FROM saga_log s WHERE s.run_id = r.run_id OFFSET 0) s ON true
 *  WHERE r.run_id = ANY($runs) ORDER BY r.run_id, s.step_idx;
 * SELECT c.*, clock.db_now FROM (SELECT now() AS db_now) clock
 *   LEFT JOIN LATERAL (<for each of $runs: SELECT * FROM compensations WHERE run_id = it OFFSET 0>) c ON true;
 * ```
 *
 * Why the laterals, and `OFFSET 0` (which keeps Postgres from flattening them into a plain join): each run's
 * rows are fetched by the primary key's leading column, one index probe per run, as soon as the table
 * holds more than a few pages. As a plain join, a young table without statistics (a new deployment, a
 * bench's schema) made Postgres hash-join the whole `saga_log` or `compensations` on every read, so that
 * each read cost the size of the log. So written, they can be prepared.
 *
 * The outer joins keep a run without steps, and `now()` when no run has a compensation yet. Like the
 * reads they replace (one run at a time), the two are separate snapshots, in no fixed order, and that is
 * safe: every write made from them is a compare-and-set on what was read, compensated and skipped are
 * final (a stale `pending` only costs a compare-and-set that loses), and a compensation missing from the
 * read is planned again (`ON CONFLICT DO NOTHING`, then read back), never taken as done.
 */
export async function readRunStates(
  db: SagaDb,
  runIds: readonly string[],
): Promise<ReadonlyMap<string, RunState>> {
  const ids = [...runIds];
  type StepRead = (StepRow | { readonly run_id: null }) & {
    readonly of_run: string;
    readonly run_status: RunStatus;
    readonly run_status_reason: string | null;
    readonly run_tenant_id: string;
    readonly run_policy: RunPolicy;
    readonly run_authority_at: Date;
    readonly run_definition: string | null;
  };
  type CompRead = (CompensationRow | { readonly run_id: null }) & { readonly db_now: Date };
  // On two connections at once: one round trip of latency; their order does not matter (see above).
  const [steps, comps] = await Promise.all([
    sql<StepRead>`${preparedAs('comp_read_runs_steps')}
      SELECT r.run_id AS of_run, r.status AS run_status, r.status_reason AS run_status_reason,
             r.tenant_id AS run_tenant_id, r.policy AS run_policy, r.authority_at AS run_authority_at,
             r.definition_name AS run_definition, ${stepRowColumns('s')}
        FROM runs r
        LEFT JOIN LATERAL (SELECT * FROM saga_log s WHERE s.run_id = r.run_id OFFSET 0) s ON true
       WHERE r.run_id = ANY(${ids}::text[])
       ORDER BY r.run_id, s.step_idx`.execute(db),
    sql<CompRead>`${preparedAs('comp_read_compensations')}
      SELECT c.*, clock.db_now
        FROM (SELECT now() AS db_now) clock
        LEFT JOIN LATERAL (
          SELECT x.* FROM unnest(${ids}::text[]) AS q(run_id)
           CROSS JOIN LATERAL (SELECT * FROM compensations c WHERE c.run_id = q.run_id OFFSET 0) x
        ) c ON true`.execute(db),
  ]);
  const dbNow = comps.rows[0]!.db_now;
  const states = new Map<
    string,
    { run: RunState['run']; steps: StepRow[]; comps: Map<number, CompensationRow> }
  >(ids.map((id) => [id, { run: undefined, steps: [], comps: new Map() }]));
  for (const {
    of_run,
    run_status,
    run_status_reason,
    run_tenant_id,
    run_policy,
    run_authority_at,
    run_definition,
    ...step
  } of steps.rows) {
    const state = states.get(of_run)!;
    state.run = {
      status: run_status,
      status_reason: run_status_reason,
      tenant_id: run_tenant_id,
      policy: run_policy,
      authority_at: run_authority_at,
      definition_name: run_definition,
    };
    if (step.run_id !== null) state.steps.push(step);
  }
  for (const { db_now: _, ...row } of comps.rows)
    if (row.run_id !== null) states.get(row.run_id)?.comps.set(row.step_idx, row);
  return new Map([...states].map(([id, s]) => [id, { ...s, dbNow }]));
}
