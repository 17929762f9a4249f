/**
 * The set-up the core tests share: a run of tenant `acme` with a `create_ticket` step (at index 0 unless
 * told), written through `recordIntent` as the intake writes it (the row, its intake event and, for an
 * INTENDED step, its outbox message, together). The run is created if it does not exist yet.
 */
import {
  createRun,
  payloadHash,
  recordIntent,
  stepKey,
  StepStatus,
  type NewIntent,
  type StepRow,
} from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';

export interface IntendedStepOptions {
  /** The tool's arguments; `{ orderId: runId }` unless given. */
  readonly args?: Record<string, unknown>;
  readonly audience?: readonly string[];
  readonly status?: typeof StepStatus.INTENDED | typeof StepStatus.AWAITING_APPROVAL;
  /** The step's index; 0 unless given. */
  readonly stepIdx?: number;
}

export async function intendedStep(
  env: TestEnv,
  runId: string,
  opts: IntendedStepOptions = {},
): Promise<StepRow> {
  await createRun(env.db, { runId, tenantId: 'acme', metadata: {} });
  const args = opts.args ?? { orderId: runId };
  const stepIdx = opts.stepIdx ?? 0;
  // The fields an intake writes for the step: newIntent's, without what only the grouped form takes.
  const {
    operation: _operation,
    claim: _claim,
    ...fields
  } = newIntent(runId, stepIdx, {
    args,
    audience: [...(opts.audience ?? [])],
  });
  return env.db
    .transaction()
    .execute((trx) =>
      recordIntent(trx, { ...fields, status: opts.status ?? StepStatus.INTENDED, schema: env.schema }),
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

/**
 * The same `create_ticket` step as an item of the grouped intake (`recordNewIntents`): tenant `acme`, its
 * operation identified by `orderId` (not repeatable, so the duplicate check runs), arguments
 * `{ orderId: runId }` unless given; the rest from `opts` (no compensation, no dependency, unclaimed).
 */
export function newIntent(
  runId: string,
  stepIdx: number,
  opts: Partial<Pick<NewIntent, 'args' | 'compensation' | 'dependsOn' | 'claim' | 'audience'>> = {},
): NewIntent {
  const args = opts.args ?? { orderId: runId };
  const key = stepKey(runId, stepIdx, 'create_ticket');
  return {
    runId,
    stepIdx,
    tenantId: 'acme',
    tool: 'create_ticket',
    toolClass: 'compensatable',
    toolVersion: 1,
    idempotencyKey: key,
    args,
    payloadHash: payloadHash('create_ticket', args),
    compensation: opts.compensation ?? null,
    correction: null,
    audience: opts.audience ?? ['support_team'],
    dependsOn: opts.dependsOn ?? null,
    operation: { tool: 'create_ticket', args, identity: { orderId: args.orderId ?? null } },
    ...(opts.claim ? { claim: opts.claim } : {}),
  };
}
