import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import { StepEventKind } from '../steps/step-event-kind.js';
import type { StepStatus } from '../steps/step-status.js';

/** A step of the run as the rules of a governed run read it (`bindCall`). */
export interface UsedStep {
  readonly stepIdx: number;
  readonly tool: string;
  /** The definition step the call was matched to; null on a run without a definition. */
  readonly stepId: string | null;
  readonly status: StepStatus;
  readonly attempts: number;
  readonly args: Readonly<Record<string, unknown>>;
  readonly externalRef: string | null;
  readonly result: unknown;
}

/** What a governed run has used so far, read under its lock, with the database's clock. */
export interface RunUsage {
  /** `now()` of the intake transaction: deadlines compare with it, never with a process's clock. */
  readonly now: Date;
  readonly steps: readonly UsedStep[];
  /** Agent retries of existing steps (RETRY_CALL events): they count against `budget.maxAttempts`. */
  readonly retries: number;
}

/**
 * Reads the run's steps, its agent retries and the database's clock in one statement. Parameters: the run
 * id. Runs in the intake transaction after `lockRun`, so it sees every intake of the run committed before
 * the lock; only for a governed run (the grouped intake of an unbound run reads none of this). Both reads
 * are the run's own rows by primary-key range (`saga_log (run_id, step_idx)`, `step_events (run_id, id)`).
 */
export async function readRunUsage(trx: SagaTrx, runId: string): Promise<RunUsage> {
  const r = await sql<{ now: Date; retries: number; steps: UsedStep[] }>`
    SELECT now() AS now,
           (SELECT count(*)::int FROM step_events e
             WHERE e.run_id = ${runId} AND e.kind = ${StepEventKind.RETRY_CALL}) AS retries,
           coalesce((SELECT jsonb_agg(jsonb_build_object(
                       'stepIdx', s.step_idx, 'tool', s.tool, 'stepId', s.step_id, 'status', s.status,
                       'attempts', s.attempts, 'args', s.args, 'externalRef', s.external_ref,
                       'result', s.result) ORDER BY s.step_idx)
                       FROM saga_log s WHERE s.run_id = ${runId}), '[]'::jsonb) AS steps`.execute(trx);
  const row = r.rows[0]!;
  return { now: row.now, retries: row.retries, steps: row.steps };
}
