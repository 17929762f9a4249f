import { sql } from 'kysely';
import {
  appendStepEvent,
  IdempotencyMismatchError,
  lockRun,
  markOutcomeDelivered,
  recordIntent,
  redactArgs,
  redispatchStep,
  RunNotRunningError,
  RunStatus,
  StepEventKind,
  StepStatus,
  StepUnresolvedError,
  type AnyTool,
  type Logger,
  type SagaTrx,
  type StepRow,
  type ToolRegistry,
} from '@agent-saga/core';
import { settledOutcome } from './call-outcome.js';
import { readDispatch, type Dispatch } from './dispatch.js';
import { planIntent } from './intent-plan.js';
import { diffRetryArgs } from './retry-args.js';
import { resolveStep } from './step-resolution.js';

export interface IntakeRequest {
  readonly tenantId: string;
  readonly runId: string;
  readonly tool: AnyTool;
  /** Arguments already parsed by the tool's schema. */
  readonly args: Record<string, unknown>;
  readonly stepIdx: number | undefined;
  readonly registry: ToolRegistry;
  readonly schema: string;
  readonly log: Logger;
}

/**
 * What the intake transaction decided:
 * - `step`: the step to answer with; `dispatch` is set when this call committed an outbox message (a new
 *   INTENDED step or a re-dispatch), `delivered` when its settled outcome was marked delivered already;
 * - `lookup`: a retry of an UNKNOWN or lease-expired INTENDED step; the effect must be looked up by key,
 *   outside this transaction (a lookup calls the real system and may pause);
 * - `refused`: a STEP_UNRESOLVED that carries a settled outcome; it was marked delivered, so the
 *   transaction commits and the refusal is thrown afterwards.
 */
export type IntakeOutcome =
  | {
      readonly kind: 'step';
      readonly step: StepRow;
      readonly replayed: boolean;
      readonly dispatch: Dispatch | null;
      readonly delivered: boolean;
    }
  | { readonly kind: 'lookup'; readonly step: StepRow }
  | { readonly kind: 'refused'; readonly error: StepUnresolvedError };

type ExistingStep = StepRow & { readonly lease_expired: boolean };

/**
 * The one transaction of a side-effecting call: lock the run, resolve the step, and either write the new
 * intent (row, compensation, first event and outbox message, all or nothing: no row, no call) or handle the
 * retry of an existing step. Every refusal throws, so nothing is written on a 4xx.
 */
export async function callIntake(trx: SagaTrx, req: IntakeRequest): Promise<IntakeOutcome> {
  const run = await lockRun(trx, req.tenantId, req.runId);
  if (run.status !== RunStatus.RUNNING) throw new RunNotRunningError(req.runId, run.status);
  const targetIdx = req.stepIdx ?? run.cursor;
  const existing = await readStep(trx, req.runId, targetIdx);
  const resolution = resolveStep({
    tool: req.tool.name,
    requestedIdx: req.stepIdx,
    cursor: run.cursor,
    existing: existing && {
      tool: existing.tool,
      status: existing.status,
      outcomeDelivered: existing.outcome_delivered,
    },
    earlierUnknownIdx:
      req.stepIdx !== undefined && !existing ? await firstUnknownBelow(trx, req.runId, targetIdx) : undefined,
  });
  switch (resolution.kind) {
    case 'new':
      return newStep(trx, req, resolution.stepIdx);
    case 'retry':
      return retryStep(trx, req, existing!);
    case 'deliver-and-refuse': {
      await markOutcomeDelivered(trx, req.runId, resolution.stepIdx);
      return {
        kind: 'refused',
        error: new StepUnresolvedError(
          resolution.stepIdx,
          `step ${resolution.stepIdx} (${existing!.tool}) settled as ${existing!.status} before this call; ` +
            'read its outcome, then call again',
          settledOutcome(existing!),
        ),
      };
    }
    default: {
      const never: never = resolution;
      throw new Error(`unhandled resolution ${JSON.stringify(never)}`);
    }
  }
}

async function newStep(trx: SagaTrx, req: IntakeRequest, stepIdx: number): Promise<IntakeOutcome> {
  const plan = planIntent({
    tool: req.tool,
    args: req.args,
    runId: req.runId,
    stepIdx,
    registry: req.registry,
    logger: req.log,
  });
  const row = await recordIntent(trx, {
    runId: req.runId,
    stepIdx,
    tenantId: req.tenantId,
    tool: req.tool.name,
    toolClass: req.tool.class,
    toolVersion: req.tool.version,
    idempotencyKey: plan.idempotencyKey,
    args: req.args,
    payloadHash: plan.payloadHash,
    compensation: plan.compensation,
    correction: plan.correction,
    audience: plan.audience,
    dependsOn: null,
    status: plan.status,
    schema: req.schema,
  });
  req.log.info(
    {
      runId: req.runId,
      stepIdx,
      key: plan.idempotencyKey,
      tool: req.tool.name,
      status: plan.status,
      ...(plan.holdReason ? { holdReason: plan.holdReason } : {}),
      args: redactArgs(req.tool, req.args),
    },
    'step intended',
  );
  const dispatch = row.status === StepStatus.INTENDED ? await readDispatch(trx, row.idempotency_key) : null;
  return { kind: 'step', step: row, replayed: false, dispatch, delivered: false };
}

/**
 * A retry of an existing step. The model's new arguments never go downstream: an identity change is
 * refused, anything else is recorded (RETRY_CALL) and answered with the step's own outcome.
 */
async function retryStep(trx: SagaTrx, req: IntakeRequest, step: ExistingStep): Promise<IntakeOutcome> {
  const diff = diffRetryArgs(req.tool, step.args, req.args);
  if (diff.identityFields.length > 0)
    throw new IdempotencyMismatchError(
      step.step_idx,
      diff.identityFields.map((f) => `args.${f}`),
    );
  await appendStepEvent(trx, {
    runId: step.run_id,
    stepIdx: step.step_idx,
    kind: StepEventKind.RETRY_CALL,
    cause: diff.reworded ? 'retry with reworded arguments' : 'retry',
    detail: { args: req.args, reworded: diff.reworded, status: step.status },
  });
  const log = req.log.child({ runId: step.run_id, stepIdx: step.step_idx, key: step.idempotency_key });
  log.info({ status: step.status, reworded: diff.reworded }, 'retry of a step');
  const answer = (delivered = false): IntakeOutcome => ({
    kind: 'step',
    step,
    replayed: true,
    dispatch: null,
    delivered,
  });
  switch (step.status) {
    case StepStatus.CONFIRMED:
    case StepStatus.FAILED:
      // The answer carries the settled outcome: delivered now, in this transaction.
      await markOutcomeDelivered(trx, step.run_id, step.step_idx);
      return answer(true);
    case StepStatus.UNKNOWN:
      return { kind: 'lookup', step };
    case StepStatus.INTENDED:
      // Within its lease an executor may be sending it right now: wait. Past it, nobody holds it: look up.
      return step.lease_expired ? { kind: 'lookup', step } : answer();
    case StepStatus.NOT_EXECUTED: {
      const redispatch = await redispatchStep(trx, {
        runId: step.run_id,
        stepIdx: step.step_idx,
        cause: 'retry call: re-dispatch of a step proven not executed',
        schema: req.schema,
      });
      return {
        kind: 'step',
        step: redispatch.row,
        replayed: false,
        dispatch: await readDispatch(trx, step.idempotency_key),
        delivered: false,
      };
    }
    case StepStatus.AWAITING_APPROVAL:
    case StepStatus.REJECTED:
    case StepStatus.MANUAL_INTERVENTION:
      return answer();
    default: {
      const never: never = step.status;
      throw new Error(`unhandled step status ${String(never)}`);
    }
  }
}

/** The step at `stepIdx`, with whether its lease has run out by the database's clock. */
async function readStep(trx: SagaTrx, runId: string, stepIdx: number): Promise<ExistingStep | undefined> {
  return trx
    .selectFrom('saga_log')
    .selectAll()
    .select(sql<boolean>`coalesce(lease_until < now(), false)`.as('lease_expired'))
    .where('run_id', '=', runId)
    .where('step_idx', '=', stepIdx)
    .executeTakeFirst();
}

async function firstUnknownBelow(trx: SagaTrx, runId: string, stepIdx: number): Promise<number | undefined> {
  const row = await trx
    .selectFrom('saga_log')
    .select('step_idx')
    .where('run_id', '=', runId)
    .where('step_idx', '<', stepIdx)
    .where('status', '=', StepStatus.UNKNOWN)
    .orderBy('step_idx')
    .limit(1)
    .executeTakeFirst();
  return row?.step_idx;
}
