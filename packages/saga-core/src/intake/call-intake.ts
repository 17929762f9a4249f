import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import { preparedAs } from '../db/prepared-statements.js';
import type { RunRow, StepRow } from '../db/schema.js';
import {
  BadRequestError,
  type DuplicateOperationError,
  IdempotencyMismatchError,
  PivotRequiredError,
  PivotStagedError,
  RunNotRunningError,
  SagaError,
  StepUnresolvedError,
} from '../errors/errors.js';
import { executeDispatch, type ExecuteDispatch } from '../outbox/execute-job.js';
import type { Logger } from '../process/logger.js';
import { readRunUsage } from '../runs/read-run-usage.js';
import { CURSOR_FLOOR_LAG, raiseCursorFloor, runCursorOf } from '../runs/run-cursor.js';
import { lockRun } from '../runs/run-rows.js';
import { RunStatus } from '../runs/run-status.js';
import { bindCall, definitionRepeats, type CallBinding } from '../sagas/bind-call.js';
import { checkAttempts, checkDeadline } from '../sagas/check-budget.js';
import type { SagaRegistry } from '../sagas/saga-registry.js';
import { appendStepEvent } from '../steps/append-event.js';
import { planIntent, type IntentPlan } from '../steps/intent/plan-intent.js';
import { recordIntent, type CallDecision } from '../steps/intent/record-intent.js';
import type { NewIntent } from '../steps/intent/new-intent.js';
import { markOutcomeDelivered } from '../steps/outcome/mark-outcome-delivered.js';
import {
  earlierOperationSql,
  operationIdentity,
  operationParams,
  parseEarlierOperation,
  refusalOfRepeat,
  type EarlierOperation,
  type OperationIdentity,
} from '../steps/intent/find-duplicate-operation.js';
import type { RedispatchBudget } from '../steps/redispatch/redispatch-budget.js';
import { redispatchStep } from '../steps/redispatch/redispatch-step.js';
import { StepEventKind } from '../steps/step-event-kind.js';
import { StepStatus } from '../steps/step-status.js';
import type { TraceContext } from '../tracing/trace-context.js';
import type { AnyTool } from '../tools/define-tool.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { argsForLog, logsAt } from '../privacy/args-for-log.js';
import { holdForApproval } from './hold-for-approval.js';
import { readDispatch } from './read-dispatch.js';
import { diffRetryArgs } from './retry-args.js';
import { resolveStep } from './step-resolution.js';
import { checkRequestedIndices, checkRunHasRoom, DEFAULT_MAX_STEPS_PER_RUN } from './step-limit.js';

export interface IntakeRequest {
  readonly tenantId: string;
  readonly runId: string;
  readonly tool: AnyTool;
  /** Arguments already parsed by the tool's schema. */
  readonly args: Record<string, unknown>;
  readonly stepIdx: number | undefined;
  /** Earlier steps a new step depends on (unwind order); undefined: every earlier step. */
  readonly dependsOn?: readonly number[] | undefined;
  /** The model's decision behind the call: on the intake event of a new step, the RETRY_CALL of a retry. */
  readonly decision?: CallDecision | undefined;
  /**
   * The intake's span (the API's, a child of the caller's `traceparent`): a new step is stored with it and
   * dispatched under it. Absent: a new step starts a trace of its own.
   */
  readonly trace?: TraceContext | undefined;
  readonly registry: ToolRegistry;
  /** The tool module's saga definitions: the calls of a bound run are matched against its own. */
  readonly definitions?: SagaRegistry | undefined;
  readonly schema: string;
  readonly log: Logger;
  /**
   * SAGA_FAST_PATH: the API publishes what this transaction dispatches right after the commit, so the
   * commit does not NOTIFY the relays (they sweep what the fast path missed on their poll).
   */
  readonly fastPath: boolean;
  /** With the fast path, how long the relays leave this call's outbox row to the API (RELAY_GRACE_MS). */
  readonly relayGraceMs: number;
  /** How long a held step waits for its approval (APPROVAL_TTL_MS). */
  readonly approvalTtlMs: number;
  /**
   * SAGA_MAX_REDISPATCHES and SAGA_REDISPATCH_MIN_SPAN_MS (`redispatchBudgetSpent`): once spent, a step proven
   * absent goes to a person instead of being sent again.
   */
  readonly redispatchBudget: RedispatchBudget;
  /**
   * SAGA_MAX_STEPS_PER_RUN: a run holds steps `0 … max - 1` (see `step-limit.ts`); default
   * {@link DEFAULT_MAX_STEPS_PER_RUN}. An explicit `stepIdx` or `dependsOn` entry past it is 400, a new step
   * at a cursor past it 409 STEP_LIMIT; nothing is written for either.
   */
  readonly maxStepsPerRun?: number | undefined;
  /**
   * The settled outcome a STEP_UNRESOLVED refusal carries, as the caller's wire shows a step (the API's
   * call answer). Default: the step's status, index, key, tool and, when CONFIRMED, its external ref.
   */
  readonly presentOutcome?: ((step: StepRow) => Record<string, unknown>) | undefined;
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
      readonly dispatch: ExecuteDispatch | null;
      readonly delivered: boolean;
    }
  | { readonly kind: 'lookup'; readonly step: StepRow }
  | { readonly kind: 'refused'; readonly error: StepUnresolvedError };

type ExistingStep = StepRow & { readonly lease_expired: boolean };

/**
 * The one home of the intake rules, run by the API's intake transaction (`POST /v1/runs/{id}/calls`) and by
 * `recordCallerIntent` in a caller's own transaction (which takes a `lookup` outcome as it is: no vendor
 * call inside someone else's transaction).
 *
 * The one transaction of a side-effecting call: lock the run, resolve the step, and either write the new
 * intent (row, compensation, first event and outbox message, all or nothing: no row, no call) or handle the
 * retry of an existing step. Every refusal throws, so nothing is written on a 4xx; a new step that repeats
 * an earlier step's operation is one of them (DUPLICATE_OPERATION, read with the target, under the lock).
 */
export async function callIntake(trx: SagaTrx, req: IntakeRequest): Promise<IntakeOutcome> {
  checkRequestedIndices(req.stepIdx, req.dependsOn, maxStepsOf(req));
  const run = await lockRun(trx, req.tenantId, req.runId);
  if (run.status !== RunStatus.RUNNING) throw new RunNotRunningError(req.runId, run.status);
  const operation = operationIdentity(req.tool, req.args);
  const target = await readTarget(trx, req.runId, req.stepIdx, operation);
  const targetIdx = target.idx;
  // A step far past the cursor's stored floor raises it (`run-cursor.ts`).
  if (targetIdx - run.cursor_floor >= CURSOR_FLOOR_LAG) await raiseCursorFloor(trx, req.runId);
  const existing = target.step;
  // A new step that repeats an earlier step's operation is refused as that duplicate before anything else
  // is decided, even with an unknown step below it: the refusal writes nothing and carries the earlier
  // step's outcome, which is what its caller needs (an agent resuming from a transcript that lacks a
  // confirmed write, told only "step 0 is unknown", would try and give up; `pnpm simulate`). The unknown
  // step still waits for its own retry: nothing new is written past it. A repeat of a step whose own outcome
  // is not known is refused STEP_UNRESOLVED naming that step (`refusalOfRepeat`): not a duplicate yet.
  if (!existing && target.duplicateOf && !definitionRepeats(req.definitions, run, req.tool))
    throw refuseDuplicate(req, targetIdx, target.duplicateOf);
  const resolution = resolveStep({
    tool: req.tool.name,
    requestedIdx: req.stepIdx,
    cursor: targetIdx,
    existing: existing && {
      tool: existing.tool,
      status: existing.status,
      outcomeDelivered: existing.outcome_delivered,
    },
    earlierUnknownIdx: target.earlierUnknownIdx,
  });
  switch (resolution.kind) {
    case 'new':
      if (run.pivot_idx !== null) throw new PivotStagedError(req.runId, null);
      return newStep(trx, req, run, resolution.stepIdx, target.duplicateOf);
    case 'retry':
      return retryStep(trx, req, run, existing!);
    case 'deliver-and-refuse': {
      await markOutcomeDelivered(trx, req.runId, resolution.stepIdx);
      return {
        kind: 'refused',
        error: new StepUnresolvedError(
          resolution.stepIdx,
          `step ${resolution.stepIdx} (${existing!.tool}) settled as ${existing!.status} before this call; ` +
            'read its outcome, then call again',
          (req.presentOutcome ?? defaultOutcome)(existing!),
        ),
      };
    }
    default: {
      const never: never = resolution;
      throw new Error(`unhandled resolution ${JSON.stringify(never)}`);
    }
  }
}

function maxStepsOf(req: IntakeRequest): number {
  return req.maxStepsPerRun ?? DEFAULT_MAX_STEPS_PER_RUN;
}

/** The settled outcome of a step for a caller that gave no `presentOutcome`. */
function defaultOutcome(step: StepRow): Record<string, unknown> {
  return {
    status: step.status,
    stepIdx: step.step_idx,
    idempotencyKey: step.idempotency_key,
    tool: step.tool,
    ...(step.status === StepStatus.CONFIRMED ? { externalRef: step.external_ref } : {}),
  };
}

async function newStep(
  trx: SagaTrx,
  req: IntakeRequest,
  run: RunRow,
  stepIdx: number,
  duplicateOf: EarlierOperation | undefined,
): Promise<IntakeOutcome> {
  checkRunHasRoom(req.runId, stepIdx, maxStepsOf(req));
  const later = req.dependsOn?.find((d) => d >= stepIdx);
  if (later !== undefined)
    throw new BadRequestError('dependsOn', `dependsOn: step ${later} is not earlier than step ${stepIdx}`);
  // A replanned duplicate is refused unless the tool, or the bound run's definition step, is repeatable.
  if (duplicateOf && !definitionRepeats(req.definitions, run, req.tool))
    throw refuseDuplicate(req, stepIdx, duplicateOf);
  const binding = run.governed ? await bindGoverned(trx, req, run) : UNGOVERNED;
  const planned = planOf(req, stepIdx);
  // A call held for its money alone is held as an irreversible one is (kind `step`), with the reason.
  const plan: IntentPlan =
    binding.hold && planned.status === StepStatus.INTENDED
      ? { ...planned, status: StepStatus.AWAITING_APPROVAL, holdReason: binding.hold.reason }
      : planned;
  let approvalId: string | null = null;
  if (plan.status === StepStatus.AWAITING_APPROVAL) {
    // requirePivot refuses what the tool itself needs a person for; a money hold is this run's own rule.
    if (run.policy.requirePivot && planned.status === StepStatus.AWAITING_APPROVAL)
      throw new PivotRequiredError(req.tool.name, plan.holdReason ?? 'held');
    approvalId = (await holdForApproval(trx, req, stepIdx, plan, binding.hold)).id;
  }
  const row = await recordIntent(trx, {
    ...intentOf(req, stepIdx, plan),
    approvalId,
    stepId: binding.stepId,
    status: plan.status,
    schema: req.schema,
    notifyRelay: !req.fastPath,
    relayGraceMs: req.fastPath ? req.relayGraceMs : 0,
  });
  logIntended(req, stepIdx, plan);
  // The job the outbox row holds, built from the same values rather than read back.
  const dispatch = row.status === StepStatus.INTENDED ? executeDispatch(row, 1) : null;
  return { kind: 'step', step: row, replayed: false, dispatch, delivered: false };
}

const UNGOVERNED: CallBinding = { stepId: null, hold: null };

/**
 * The rules of a governed run for a new step (core's `bindCall`: definition, plan, budget, money approval),
 * on what the run has used, read under the run lock. A refusal is logged (nothing is written for it).
 */
async function bindGoverned(trx: SagaTrx, req: IntakeRequest, run: RunRow): Promise<CallBinding> {
  const usage = await readRunUsage(trx, req.runId);
  try {
    return bindCall({
      run,
      tool: req.tool,
      args: req.args,
      definitions: req.definitions,
      registry: req.registry,
      usage,
    });
  } catch (err) {
    if (err instanceof SagaError && err.httpStatus !== 500)
      req.log.warn({ runId: req.runId, tool: req.tool.name, code: err.code }, 'call refused by the run');
    throw err;
  }
}

/**
 * The refusal of a new step at `stepIdx` that repeats the operation of step `earlier` (`refusalOfRepeat`:
 * DUPLICATE_OPERATION, or STEP_UNRESOLVED while the earlier step's outcome is not known), logged with both
 * steps: nothing is written for it, so the log line (and the calls metric's outcome) is where it shows.
 */
function refuseDuplicate(
  req: IntakeRequest,
  stepIdx: number,
  earlier: EarlierOperation,
): DuplicateOperationError | StepUnresolvedError {
  const refusal = refusalOfRepeat(req.tool.name, earlier);
  req.log.warn(
    {
      runId: req.runId,
      stepIdx,
      tool: req.tool.name,
      code: refusal.code,
      duplicateOf: earlier.stepIdx,
      duplicateStatus: earlier.status,
      duplicateKey: earlier.idempotencyKey,
      ...argsForLog(req.tool.name, req.args),
    },
    'duplicate operation refused',
  );
  return refusal;
}

/** The plan of `req` at `stepIdx` (core's `planIntent`), the same for the grouped and the transaction intake. */
export function planOf(req: IntakeRequest, stepIdx: number): IntentPlan {
  return planIntent({
    tool: req.tool,
    args: req.args,
    runId: req.runId,
    stepIdx,
    registry: req.registry,
    logger: req.log,
  });
}

/** The row of a new step at `stepIdx`, from the call and its plan (the intake transaction's and the grouped intake's). */
export function intentOf(req: IntakeRequest, stepIdx: number, plan: IntentPlan): NewIntent {
  return {
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
    dependsOn: storedDependsOn(req.dependsOn),
    decision: req.decision ?? null,
    trace: req.trace ?? null,
    operation: operationIdentity(req.tool, req.args),
  };
}

/** `dependsOn` as the row stores it: each index once, ascending; null for "every earlier step". */
export function storedDependsOn(dependsOn: readonly number[] | undefined): number[] | null {
  return dependsOn ? [...new Set(dependsOn)].sort((a, b) => a - b) : null;
}

/** The log line of a new step, written once its row is (in the intake transaction or the grouped intake). */
export function logIntended(req: IntakeRequest, stepIdx: number, plan: IntentPlan): void {
  if (!logsAt(req.log, 'info')) return;
  req.log.info(
    {
      runId: req.runId,
      stepIdx,
      key: plan.idempotencyKey,
      tool: req.tool.name,
      status: plan.status,
      ...(plan.holdReason ? { holdReason: plan.holdReason } : {}),
      ...argsForLog(req.tool.name, req.args, plan.payloadHash),
    },
    'step intended',
  );
}

/**
 * A retry of an existing step. The model's new arguments never go downstream: an identity change is
 * refused, anything else is recorded (RETRY_CALL) and answered with the step's own outcome.
 */
async function retryStep(
  trx: SagaTrx,
  req: IntakeRequest,
  run: RunRow,
  step: ExistingStep,
): Promise<IntakeOutcome> {
  const diff = diffRetryArgs(req.tool, step.args, req.args);
  if (diff.identityFields.length > 0)
    throw new IdempotencyMismatchError(
      step.step_idx,
      diff.identityFields.map((f) => `args.${f}`),
    );
  // A retry that would send again (a re-dispatch) is one more attempt of a governed run: held to its
  // deadline and maxAttempts before anything is written. Other retries send nothing; their RETRY_CALL
  // counts against maxAttempts later (core's `checkAttempts`).
  if (run.governed && step.status === StepStatus.NOT_EXECUTED) {
    const usage = await readRunUsage(trx, req.runId);
    checkDeadline(run.deadline_at, usage);
    checkAttempts(run.budget, usage);
  }
  await appendStepEvent(trx, {
    runId: step.run_id,
    stepIdx: step.step_idx,
    kind: StepEventKind.RETRY_CALL,
    cause: diff.reworded ? 'retry with reworded arguments' : 'retry',
    detail: {
      args: req.args,
      reworded: diff.reworded,
      status: step.status,
      ...(req.decision ? { decision: req.decision } : {}),
    },
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
        notifyRelay: !req.fastPath,
        relayGraceMs: req.fastPath ? req.relayGraceMs : 0,
        by: { kind: 'harness', ...req.redispatchBudget },
      });
      // Budget spent: the step is MANUAL_INTERVENTION with a case; the answer says so, nothing is sent.
      // Authority lapsed (awaiting-renewal): the step stays NOT_EXECUTED until a person renews it.
      if (redispatch.kind === 'budget-spent' || redispatch.kind === 'awaiting-renewal')
        return { kind: 'step', step: redispatch.row, replayed: true, dispatch: null, delivered: false };
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

/**
 * The step at `stepIdx` (with whether its lease has run out by the database's clock) and, with no step
 * there: for an explicit index, the lowest earlier step that is UNKNOWN, and, unless `operation` is null (a
 * repeatable tool), the step of the run that a new step of `operation` would duplicate (core's
 * `earlierOperationSql`). One read, run after `lockRun` so it sees every intake of this run that committed
 * before the lock was granted.
 */
async function readTarget(
  trx: SagaTrx,
  runId: string,
  stepIdx: number | undefined,
  operation: OperationIdentity | null,
): Promise<{
  idx: number;
  step: ExistingStep | undefined;
  earlierUnknownIdx: number | undefined;
  duplicateOf: EarlierOperation | undefined;
}> {
  // The target is the requested index, or the run's cursor computed in this same statement, so the cursor
  // and the row it points at are read from one snapshot (a delivered mark committed in between cannot
  // leave the cursor resting on a delivered step).
  const r = await sql<
    ExistingStep & { target_idx: number; earlier_unknown: number | null; duplicate_of: unknown }
  >`${preparedAs('saga_intake_target')}
    WITH t AS (SELECT coalesce(${stepIdx ?? null}::int, ${runCursorOf(runId)}) AS idx)
    SELECT t.idx AS target_idx, s.*, coalesce(s.lease_until < now(), false) AS lease_expired,
           CASE WHEN ${stepIdx !== undefined}::bool AND s.run_id IS NULL THEN (
             SELECT u.step_idx FROM saga_log u
              WHERE u.run_id = ${runId} AND u.step_idx < t.idx AND u.status = ${StepStatus.UNKNOWN}
              ORDER BY u.step_idx LIMIT 1) END AS earlier_unknown,
           CASE WHEN ${operation !== null}::bool AND s.run_id IS NULL
                THEN ${earlierOperationSql(sql<string>`${runId}::text`, operationParams(operation))} END AS duplicate_of
      FROM t
      LEFT JOIN saga_log s ON s.run_id = ${runId} AND s.step_idx = t.idx`.execute(trx);
  const { target_idx, earlier_unknown, duplicate_of, ...step } = r.rows[0]!;
  return {
    idx: target_idx,
    step: step.run_id === null ? undefined : step,
    earlierUnknownIdx: earlier_unknown ?? undefined,
    duplicateOf: parseEarlierOperation(duplicate_of),
  };
}
