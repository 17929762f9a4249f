/**
 * The set-up the compensator's statement tests share: a COMPENSATING run (reason {@link UNWIND_REQUESTED})
 * with one CONFIRMED reversible step whose compensation is stored, as the intake writes it.
 */
import { compensationKey, RunStatus, stepKey, type SagaDb, type StepRow } from '@agent-saga/core';

export const UNWIND_REQUESTED = 'unwind requested: test';

export async function unwindingRun(db: SagaDb, runId: string): Promise<StepRow> {
  await db
    .insertInto('runs')
    .values({
      run_id: runId,
      tenant_id: 't',
      status: RunStatus.COMPENSATING,
      status_reason: UNWIND_REQUESTED,
      metadata: '{}',
    })
    .execute();
  const key = stepKey(runId, 0, 'noop');
  return db
    .insertInto('saga_log')
    .values({
      run_id: runId,
      step_idx: 0,
      tenant_id: 't',
      tool: 'noop',
      tool_class: 'reversible',
      tool_version: 1,
      idempotency_key: key,
      args: JSON.stringify({ n: 1 }),
      payload_hash: Buffer.from('h'),
      status: 'CONFIRMED',
      external_ref: `ref-${runId}`,
      compensation: JSON.stringify({
        tool: 'noop_undo',
        toolVersion: 1,
        args: { target: { $ref: key } },
        key: compensationKey(runId, 0, 'noop'),
      }),
      audience: [],
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}
