/**
 * The set-up the core tests share: a run of tenant `acme` with one `create_ticket` step at index 0,
 * written through `recordIntent` as the intake writes it (the row, its intake event and, for an INTENDED
 * step, its outbox message, together).
 */
import { createRun, payloadHash, recordIntent, stepKey, StepStatus, type StepRow } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';

export interface IntendedStepOptions {
  /** The tool's arguments; `{ orderId: runId }` unless given. */
  readonly args?: Record<string, unknown>;
  readonly audience?: readonly string[];
  readonly status?: typeof StepStatus.INTENDED | typeof StepStatus.AWAITING_APPROVAL;
}

export async function intendedStep(
  env: TestEnv,
  runId: string,
  opts: IntendedStepOptions = {},
): Promise<StepRow> {
  await createRun(env.db, { runId, tenantId: 'acme', metadata: {} });
  const args = opts.args ?? { orderId: runId };
  return env.db.transaction().execute((trx) =>
    recordIntent(trx, {
      runId,
      stepIdx: 0,
      tenantId: 'acme',
      tool: 'create_ticket',
      toolClass: 'compensatable',
      toolVersion: 1,
      idempotencyKey: stepKey(runId, 0, 'create_ticket'),
      args,
      payloadHash: payloadHash('create_ticket', args),
      compensation: null,
      correction: null,
      audience: [...(opts.audience ?? [])],
      dependsOn: null,
      status: opts.status ?? StepStatus.INTENDED,
      schema: env.schema,
    }),
  );
}

/** The step a key names, by its primary key (claims find a step by run and index; the key is a guard). */
export async function stepOfKey(env: TestEnv, key: string): Promise<{ runId: string; stepIdx: number }> {
  const row = await env.db
    .selectFrom('saga_log')
    .select(['run_id', 'step_idx'])
    .where('idempotency_key', '=', key)
    .executeTakeFirstOrThrow();
  return { runId: row.run_id, stepIdx: row.step_idx };
}
