import { sql } from 'kysely';
import {
  mirrorCompensationStatus,
  preparedAs,
  CompensationStatus,
  StepEventKind,
  StepStatus,
  ToolClass,
  type CompensationRow,
  type SagaDb,
  type SagaTrx,
  type StepRow,
} from '@agent-saga/core';

/** Why a step's compensation is skipped, or null when there is something to undo automatically. */
export function skipReason(step: StepRow): string | null {
  if (step.status !== StepStatus.CONFIRMED) return `nothing to undo: the step is ${step.status}`;
  if (step.tool_class === ToolClass.PURE) return 'nothing to undo: a pure tool';
  if (step.tool_class === ToolClass.IRREVERSIBLE)
    return 'irreversible: never undone automatically (its correction, if any, is queued for a person)';
  if (!step.compensation) return 'no stored compensation: cannot be undone automatically';
  return null;
}

/** Whether the step's effect exists and the plan leaves it in place (named in PARTIALLY_COMPENSATED). */
export function leftInPlace(step: StepRow): boolean {
  return step.status === StepStatus.CONFIRMED && skipReason(step) !== null;
}

/**
 * Writes the compensation row of every step in `steps` (of one run or of several) that has none yet:
 * `pending` when a CONFIRMED step carries a stored compensation, `skipped` (with the reason) otherwise. Only
 * steps whose forward outcome is final may be passed (never INTENDED, UNKNOWN or MANUAL_INTERVENTION: those
 * are reconciled first). One statement (one round trip, one commit outside a transaction), whatever the
 * number of steps:
 *
 * ```sql
 * WITH req     AS (SELECT * FROM unnest(…) AS r(run_id, step_idx, tenant_id, tool, key, args, status, reason)),
 *      planned AS (INSERT INTO compensations … SELECT … FROM req ON CONFLICT DO NOTHING RETURNING *),
 *      mirror  AS (<mirrorCompensationStatus(planned)>),
 *      ev      AS (INSERT INTO step_event_rows … 'compensation', NULL → status, 'compensator: planned' FROM planned)
 * SELECT * FROM planned;
 * ```
 *
 * `ON CONFLICT DO NOTHING`: a compensator that resumes after a crash, or races another, plans each step
 * once; only the rows this statement inserted get their event and their mirror on `saga_log`, and only they
 * are returned (a step missing from the result was planned by someone else: read it back).
 */
export async function planCompensations(
  db: SagaDb | SagaTrx,
  steps: readonly StepRow[],
): Promise<readonly CompensationRow[]> {
  if (steps.length === 0) return [];
  // Sorted, so that two planners lock the rows they collide on in the same order.
  const planned = [...steps]
    .sort((a, b) => (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : a.step_idx - b.step_idx))
    .map((s) => {
      const reason = skipReason(s);
      return {
        s,
        reason,
        tool: reason ? null : s.compensation!.tool,
        key: reason ? null : s.compensation!.key,
        args: reason ? null : JSON.stringify(s.compensation!.args),
        status: reason ? CompensationStatus.SKIPPED : CompensationStatus.PENDING,
      };
    });
  const col = <T>(f: (p: (typeof planned)[number]) => T): T[] => planned.map(f);
  const r = await sql<CompensationRow>`${preparedAs('comp_plan')}
    WITH req AS (
      SELECT * FROM unnest(
        ${col((p) => p.s.run_id)}::text[], ${col((p) => p.s.step_idx)}::int[], ${col((p) => p.s.tenant_id)}::text[],
        ${col((p) => p.tool)}::text[], ${col((p) => p.key)}::text[], ${col((p) => p.args)}::text[],
        ${col((p) => p.status)}::text[], ${col((p) => p.reason)}::text[]
      ) AS r(run_id, step_idx, tenant_id, tool, idempotency_key, args, status, reason)
    ), planned AS (
      INSERT INTO compensations (run_id, step_idx, tenant_id, tool, idempotency_key, args, status, reason)
      SELECT run_id, step_idx, tenant_id, tool, idempotency_key, args::jsonb, status, reason FROM req
      -- No conflict target: a racing planner's row collides on the primary key (run, step) or, first, on
      -- the compensation's UNIQUE key (derived from the same run and step); both mean "planned already". A
      -- target of (run_id, step_idx) alone lets the key's unique violation through as an error.
      ON CONFLICT DO NOTHING
      RETURNING *
    ), mirror AS (
      ${mirrorCompensationStatus(sql.table('planned'))}
    ), ev AS (
      INSERT INTO step_event_rows (run_id, step_idx, kind, from_status, to_status, cause, detail)
      SELECT run_id, step_idx, ${StepEventKind.COMPENSATION}, NULL, status, 'compensator: planned',
             CASE WHEN reason IS NOT NULL THEN jsonb_build_object('reason', reason)
                  ELSE jsonb_build_object('tool', tool, 'key', idempotency_key) END
        FROM planned
    )
    SELECT * FROM planned`.execute(db);
  return r.rows;
}
