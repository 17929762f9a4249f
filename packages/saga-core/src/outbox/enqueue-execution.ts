import { sql } from 'kysely';
import { outboxChannel } from '../db/channels.js';
import type { SagaTrx } from '../db/connect.js';
import type { StepRow } from '../db/schema.js';
import { EXECUTE_TOPIC, executeDispatch } from './execute-job.js';

/**
 * Adds the outbox message that dispatches `row` to an executor, and returns its BullMQ job id
 * (`executeJobId`: the key itself for the first dispatch, so a relay that republishes after a crash adds
 * nothing; a re-dispatch or a republish gets its own id, see `enqueueNextDispatch`). Runs in the caller's
 * transaction, so the message commits with the step's state change or not at all.
 *
 * ```sql
 * INSERT INTO outbox (topic, run_id, step_idx, idempotency_key, job_id, payload, relay_after)
 * VALUES ('execute', …, $jobId, {runId, stepIdx, key, dispatchNo}, now() + $grace);
 * SELECT pg_notify(<outbox channel>, '');   -- unless notifyRelay is false
 * ```
 */
export async function enqueueExecution(
  trx: SagaTrx,
  row: StepRow,
  dispatchNo: number,
  schema: string,
  notifyRelay = true,
  relayGraceMs = 0,
): Promise<string> {
  const { jobId, data } = executeDispatch(row, dispatchNo);
  await trx
    .insertInto('outbox')
    .values({
      topic: EXECUTE_TOPIC,
      run_id: row.run_id,
      step_idx: row.step_idx,
      idempotency_key: row.idempotency_key,
      job_id: jobId,
      payload: JSON.stringify(data),
      relay_after: relayAfter(relayGraceMs),
    })
    .execute();
  if (notifyRelay) await notifyRelays(trx, schema);
  return jobId;
}

/**
 * `now()` plus the grace a self-publishing caller (the API's fast path) keeps the row for, before the
 * relays take it (`outbox.relay_after`). A bound parameter, so the SQL text is the same for every grace.
 */
export function relayAfter(graceMs: number) {
  return sql<Date>`now() + make_interval(secs => ${graceMs / 1000}::float8)`;
}

/** Wakes the outbox relays (the NOTIFY is delivered at commit). */
export async function notifyRelays(trx: SagaTrx, schema: string): Promise<void> {
  await sql`SELECT pg_notify(${outboxChannel(schema)}, '')`.execute(trx);
}
