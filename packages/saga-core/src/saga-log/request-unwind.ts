import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import type { RunRow } from '../db/schema.js';
import { InvalidRunTransitionError, RunNotRunningError } from '../errors.js';
import { RunStatus } from '../statuses.js';
import { lockRun } from './runs.js';
import { transitionRun } from './transition-run.js';

/** The NOTIFY channel that wakes compensators when a run starts to unwind (payload: the run id). */
export function unwindChannel(schema: string): string {
  return `saga_unwind_${schema}`;
}

export interface UnwindRequest {
  readonly tenantId: string;
  readonly runId: string;
  /** Why, in the words of whoever asked (agent, operator, run policy); kept in `status_reason`. */
  readonly reason: string;
  readonly schema: string;
}

/**
 * Starts the unwind of a run, in the caller's transaction: lock the run, move it to COMPENSATING by
 * compare-and-set (RUNNING or AWAITING_APPROVAL only, see `RUN_TRANSITIONS`), and NOTIFY the compensators.
 * The run's status is the durable request: a compensator that misses the NOTIFY finds the run on its
 * sweep of COMPENSATING runs, so nothing is lost between this commit and the compensator's queue.
 *
 * A run already COMPENSATING is answered as it is (an unwind asked twice is one unwind).
 * @throws NotFoundError for another tenant's or a missing run.
 * @throws RunNotRunningError for a run in a terminal status.
 */
export async function requestUnwind(trx: SagaTrx, u: UnwindRequest): Promise<RunRow> {
  const run = await lockRun(trx, u.tenantId, u.runId);
  if (run.status === RunStatus.COMPENSATING) return run;
  try {
    const row = await transitionRun(trx, {
      runId: u.runId,
      to: RunStatus.COMPENSATING,
      reason: `unwind requested: ${u.reason}`,
    });
    await sql`SELECT pg_notify(${unwindChannel(u.schema)}, ${u.runId})`.execute(trx);
    return row;
  } catch (err) {
    if (err instanceof InvalidRunTransitionError) throw new RunNotRunningError(u.runId, run.status);
    throw err;
  }
}
