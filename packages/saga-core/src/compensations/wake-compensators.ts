import { sql } from 'kysely';
import { unwindChannel } from '../db/channels.js';
import type { SagaTrx } from '../db/connect.js';

/**
 * Wakes the compensators for a COMPENSATING run: a NOTIFY of the run id on {@link unwindChannel}, delivered
 * only if the caller's transaction commits. The one place that sends it: a run that starts to unwind
 * (`startUnwind`) and a run already compensating whose compensation a person retried (`resolveCase`).
 *
 * Only a wake-up: the run's status is the durable request, and a compensator that misses the NOTIFY finds
 * the run on its sweep of COMPENSATING runs.
 */
export async function wakeCompensators(trx: SagaTrx, schema: string, runId: string): Promise<void> {
  await sql`SELECT pg_notify(${unwindChannel(schema)}, ${runId})`.execute(trx);
}
