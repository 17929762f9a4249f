import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import { RUN_CHANGED_CHANNEL_SQL } from '../db/channels.js';
import { compareAndSet } from '../db/compare-and-set.js';
import type { RunRow } from '../db/schema.js';
import { InvalidRunTransitionError } from '../errors/errors.js';
import { RUN_TRANSITIONS } from './run-transitions.js';
import { StepEventKind } from '../steps/step-event-kind.js';
import { type RunStatus } from './run-status.js';
import { appendStepEvent } from '../steps/append-event.js';

export interface RunTransitionInput {
  readonly runId: string;
  readonly to: RunStatus;
  /** Stored in `runs.status_reason`: why the run is in this status (named effects, the case). */
  readonly reason: string | null;
  /** Narrows the legal sources further. */
  readonly onlyFrom?: readonly RunStatus[];
  /** Who moved it, when a person did (recorded on the run-transition event). */
  readonly actor?: string | null;
}

/**
 * Moves a run to `to` by compare-and-set (`compareAndSet`) on the legal sources of `RUN_TRANSITIONS`:
 *
 * ```sql
 * UPDATE runs SET status = $to, status_reason = $reason, updated_at = now()
 *  WHERE run_id = $run AND status = ANY($allowedFrom) RETURNING *;
 * ```
 *
 * Zero rows is an {@link InvalidRunTransitionError} naming the status the run was really in (read under a
 * row lock in the same transaction, so the answer cannot change under the caller). A move appends a
 * `run_transition` event (no step) in the same transaction, so the run's own history is in its timeline,
 * and announces the run's id on `runChangedChannel` (delivered at commit), which wakes the reads waiting
 * for the run's status to change.
 */
export async function transitionRun(trx: SagaTrx, t: RunTransitionInput): Promise<RunRow> {
  const r = await compareAndSet(trx, {
    table: 'runs',
    key: { run_id: t.runId },
    transitions: RUN_TRANSITIONS,
    to: t.to,
    onlyFrom: t.onlyFrom,
    set: { status_reason: t.reason, updated_at: sql<Date>`now()` },
  });
  if (!r.moved) throw new InvalidRunTransitionError(t.runId, r.from, t.to);
  await appendStepEvent(trx, {
    runId: t.runId,
    stepIdx: null,
    kind: StepEventKind.RUN_TRANSITION,
    from: r.from,
    to: t.to,
    cause: t.reason ?? 'run status changed',
    actor: t.actor ?? null,
  });
  await sql`SELECT pg_notify(${sql.raw(RUN_CHANGED_CHANNEL_SQL)}, ${t.runId})`.execute(trx);
  return r.row;
}
