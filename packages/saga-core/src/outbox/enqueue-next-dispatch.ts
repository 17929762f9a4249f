import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import type { StepRow } from '../db/schema.js';
import { enqueueExecution } from './enqueue-execution.js';

/** Options of {@link enqueueNextDispatch}. */
export interface NextDispatchInput {
  /** The schema name, for the NOTIFY channel of the outbox relays. */
  readonly schema: string;
  /** Whether to NOTIFY the outbox relays (default true; false when the caller publishes the job itself). */
  readonly notifyRelay?: boolean;
  /** The caller publishes the job itself: the relays leave it alone this long (see `recordIntent`). */
  readonly relayGraceMs?: number;
}

/** A dispatch written to the outbox. */
export interface NextDispatch {
  /** 2 for the first dispatch after the intake's (which is 1). */
  readonly dispatchNo: number;
  /** The BullMQ job id of the new outbox message, distinct from every earlier dispatch of the step. */
  readonly jobId: string;
}

/**
 * Writes the next dispatch of an already-dispatched step: an outbox message numbered one past the step's
 * highest, so its job id (`<key>-d<n>`) is one BullMQ has never seen. The intake's dispatch is number 1
 * whether or not it left a message (a step written claimed at intake has none, see `IntakeClaim`), so the
 * next is never below 2. The one home of the dispatch number,
 * used by a re-dispatch after NOT_EXECUTED and by the republish of an intent Redis lost.
 *
 * ```sql
 * SELECT greatest(coalesce(max((payload->>'dispatchNo')::int), 0), 1) FROM outbox WHERE idempotency_key = $key;
 * INSERT INTO outbox (…, job_id, payload) VALUES (…, $key || '-d' || $n, {…, dispatchNo: $n});
 * ```
 *
 * Parameters: `row` is the step (its key names the messages); `schema` the NOTIFY channel. The caller must
 * hold the step's row lock (a compare-and-set on it, or `FOR UPDATE`) in `trx`, so two writers of one
 * step cannot pick the same number; the read goes through index `outbox_by_key` (migration 0007).
 */
export async function enqueueNextDispatch(
  trx: SagaTrx,
  row: StepRow,
  o: NextDispatchInput,
): Promise<NextDispatch> {
  const prev = await sql<{ n: number }>`
    SELECT greatest(coalesce(max((payload->>'dispatchNo')::int), 0), 1)::int AS n
      FROM outbox WHERE idempotency_key = ${row.idempotency_key}`.execute(trx);
  const dispatchNo = (prev.rows[0]?.n ?? 0) + 1;
  const jobId = await enqueueExecution(
    trx,
    row,
    dispatchNo,
    o.schema,
    o.notifyRelay ?? true,
    o.relayGraceMs ?? 0,
  );
  return { dispatchNo, jobId };
}
