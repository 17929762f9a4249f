import type { SagaTrx } from '../db/connect.js';
import { executeJobSchema, type ExecuteDispatch } from '../outbox/execute-job.js';

/**
 * The execute job of the latest outbox message for `key`, read back in the transaction that wrote it:
 * exactly what the relay would publish (same job id, same data). Used after a re-dispatch, whose outbox row
 * the re-dispatch wrote; a step's first dispatch, just written by the intake, is built instead of read back
 * (`executeDispatch(row, 1)`, the builder the intake used).
 */
export async function readDispatch(trx: SagaTrx, key: string): Promise<ExecuteDispatch> {
  const msg = await trx
    .selectFrom('outbox')
    .select(['job_id', 'payload'])
    .where('idempotency_key', '=', key)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  return { jobId: msg.job_id, data: executeJobSchema.parse(msg.payload) };
}
