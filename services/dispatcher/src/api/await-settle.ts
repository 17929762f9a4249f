import { preparedAs, type SagaDb, type StepRow } from '@agent-saga/core';
import { isInFlight } from './call-outcome.js';
import type { StepWatch } from './settle-waiter.js';

/**
 * Waits until the step under `key` leaves INTENDED (or NOT_EXECUTED) or `waitMs` passes, and returns the
 * step as it then is. The watch must have been opened before this is called (before the commit or the
 * publish that could make the step settle), and the step is read after it, so no notification is lost.
 * Each wake is one NOTIFY for this key; there is no polling. `current` skips the first read when the
 * caller knows the step cannot have moved since it read it (see `settle` in handle-call.ts).
 */
export async function awaitSettle(
  db: SagaDb,
  watch: StepWatch,
  key: string,
  waitMs: number,
  current?: StepRow,
): Promise<StepRow> {
  const deadline = Date.now() + waitMs;
  let step = current ?? (await readByKey(db, key));
  while (isInFlight(step.status)) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const reason = await watch.next(left);
    if (reason === 'closed') break;
    step = await readByKey(db, key);
    if (reason === 'timeout') break;
  }
  return step;
}

function readByKey(db: SagaDb, key: string): Promise<StepRow> {
  return db
    .selectFrom('saga_log')
    .selectAll()
    .where('idempotency_key', '=', key)
    .modifyEnd(preparedAs('saga_step_by_key'))
    .executeTakeFirstOrThrow();
}
