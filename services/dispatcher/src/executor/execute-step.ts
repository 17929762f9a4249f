import {
  callTool,
  claimStep,
  claimStepSlow,
  followUpRun,
  approvedVersionRefusal,
  recordOutcomeSlow,
  type ClaimResult,
  classifyToolError,
  CrashPoint,
  errorForLog,
  ErrorCode,
  DEFAULT_TOOL_TIMEOUT_MS,
  InvalidArgsError,
  parseArgs,
  parseTraceparent,
  recordOutcome,
  startTraceSpan,
  StepStatus,
  storedTrace,
  type AnyTool,
  type ExecuteJob,
  type InvariantChecker,
  type RunStatus,
  type Logger,
  type RecordOutcomeResult,
  type SagaDb,
  type StepOutcome,
  type StepRow,
  type TraceContext,
  type ToolRegistry,
  lazyChildLogger,
} from '@agent-saga/core';
import type { DispatcherConfig } from '../config.js';
import type { ExecutionMetrics } from '../metrics/worker-metrics.js';
import { ClaimFailedError } from './claim-failed-error.js';
import type { ExecutorGroups } from './executor-groups.js';

export interface ExecuteStepDeps {
  readonly db: SagaDb;
  /**
   * The pool the grouped claims and outcome records go through (`RoleContext.groupDb`: plans made once per
   * connection); absent: `db`.
   */
  readonly groupDb?: SagaDb;
  readonly registry: ToolRegistry;
  readonly config: Pick<DispatcherConfig, 'SAGA_DB_SCHEMA' | 'LEASE_MARGIN_MS'>;
  /** This process's lease owner id. */
  readonly workerId: string;
  readonly crash: (point: CrashPoint) => void;
  readonly logger: Logger;
  readonly metrics?: ExecutionMetrics;
  /**
   * Checks a bound run's invariant when its last commit step settles, so the pivot's end need not wait for
   * the reconciler's sweep (absent: the run waits `verifying` for the sweep).
   */
  readonly invariants?: InvariantChecker;
  /** Fires when the executor gives up draining: running calls stop and record UNKNOWN. */
  readonly shutdownSignal: AbortSignal;
  /**
   * When set, claims and outcome records of concurrent jobs are grouped into one statement each (see
   * `executor-groups.ts`); a job whose write the group did not make takes the slow path alone.
   */
  readonly groups?: ExecutorGroups;
}

/** Lease by tool: each tool's timeout plus LEASE_MARGIN_MS, computed once per registry. */
interface LeasePlan {
  readonly leaseMsByTool: ReadonlyMap<string, number>;
  readonly defaultLeaseMs: number;
}

const leasePlans = new WeakMap<ToolRegistry, LeasePlan>();

/** The lease of every registered tool (the claim reads the step's tool on the row). */
export function leasePlan(d: Pick<ExecuteStepDeps, 'registry' | 'config'>): LeasePlan {
  let plan = leasePlans.get(d.registry);
  if (!plan || plan.defaultLeaseMs !== DEFAULT_TOOL_TIMEOUT_MS + d.config.LEASE_MARGIN_MS) {
    plan = {
      leaseMsByTool: new Map(d.registry.list().map((t) => [t.name, t.timeoutMs + d.config.LEASE_MARGIN_MS])),
      defaultLeaseMs: DEFAULT_TOOL_TIMEOUT_MS + d.config.LEASE_MARGIN_MS,
    };
    leasePlans.set(d.registry, plan);
  }
  return plan;
}

/**
 * What became of one delivered job.
 * - `executed`: this worker claimed the step and recorded what the tool did (or FAILED when nothing was
 *   sent because the stored call cannot be made any more).
 * - `lease-expired`: an earlier attempt died holding the step; it was moved to UNKNOWN, not run again.
 * - `held`: another attempt holds a live lease until `leaseUntil`; nothing was done.
 * - `duplicate`: the step is no longer INTENDED (already run, or settled elsewhere); nothing was done.
 * - `withdrawn`: the step's run is COMPENSATING or terminal (`runStatus`): the claim withdrew it
 *   (NOT_EXECUTED, or UNKNOWN when an earlier send under its key may still commit; the reason in its
 *   events) and nothing was sent.
 * - `missing`: no step has this key (its schema was dropped, or the job is foreign).
 */
export type ExecuteStepResult =
  | {
      readonly kind: 'executed';
      readonly outcome: StepOutcome['status'];
      readonly recorded: RecordOutcomeResult;
    }
  | { readonly kind: 'lease-expired' }
  | { readonly kind: 'held'; readonly leaseUntil: Date }
  | { readonly kind: 'duplicate'; readonly status: StepStatus }
  | { readonly kind: 'withdrawn'; readonly runStatus: RunStatus }
  | { readonly kind: 'missing' };

/**
 * Runs one step delivered by BullMQ: claim by compare-and-set with a lease of the tool's timeout plus
 * LEASE_MARGIN_MS, call the tool with the stored arguments (parsed again with its schema), record the
 * outcome. Never retries: an UNKNOWN step is the reconciler's to resolve. The named crash points sit at
 * the two boundaries where a dead process leaves the most to recover.
 *
 * Failures, by when they happen:
 * - the claim throws (database error): {@link ClaimFailedError}; the tool was not called, the worker retries
 *   the job with a backoff;
 * - anything after the claim (the tool's call, recording its outcome) that throws escapes as is: the job
 *   fails and is never retried, since the tool may have run. The step keeps this worker's lease; once it
 *   expires the reconciler takes the INTENDED step with a lapsed lease, looks the effect up by key, and
 *   settles it (CONFIRMED, or NOT_EXECUTED and re-dispatched), like a crash after the tool.
 */
export async function executeStep(
  d: ExecuteStepDeps,
  job: ExecuteJob,
  jobId: string,
): Promise<ExecuteStepResult> {
  // No read first: the claim is one statement that names the lease of every tool (the job does not name
  // the step's tool), so a first delivery costs one round trip; a duplicate falls to the slow path.
  const leases = leasePlan(d);
  const claimInput = {
    runId: job.runId,
    stepIdx: job.stepIdx,
    key: job.key,
    worker: d.workerId,
    leaseMs: leases.defaultLeaseMs,
    leaseMsByTool: leases.leaseMsByTool,
    jobId,
    schema: d.config.SAGA_DB_SCHEMA,
  };
  let claim: ClaimResult;
  try {
    const grouped = d.groups
      ? await d.groups.claim.submit({ runId: job.runId, stepIdx: job.stepIdx, key: job.key, jobId })
      : null;
    claim = grouped
      ? { kind: 'claimed', row: grouped }
      : d.groups
        ? await claimStepSlow(d.db, claimInput)
        : await claimStep(d.db, claimInput);
  } catch (err) {
    // Before the tool: the one failure the worker may retry (see ClaimFailedError).
    throw new ClaimFailedError(job.key, err);
  }
  switch (claim.kind) {
    case 'claimed':
      return {
        kind: 'executed',
        ...(await runClaimedStep(d, claim.row, jobTrace(job, claim.row))),
      };
    case 'lease-expired':
      d.logger.warn(
        { runId: claim.row.run_id, stepIdx: claim.row.step_idx, key: job.key },
        'step lease expired with the step INTENDED: moved to UNKNOWN, not executed again',
      );
      return { kind: 'lease-expired' };
    case 'held':
      return { kind: 'held', leaseUntil: claim.leaseUntil };
    case 'not-intended':
      return { kind: 'duplicate', status: claim.status };
    case 'run-not-running':
      d.logger.info(
        {
          runId: claim.row.run_id,
          stepIdx: claim.row.step_idx,
          key: job.key,
          runStatus: claim.runStatus,
          status: claim.row.status,
        },
        'run no longer goes forward: step withdrawn, nothing sent',
      );
      return { kind: 'withdrawn', runStatus: claim.runStatus };
    case 'missing':
      return { kind: 'missing' };
    default: {
      const never: never = claim;
      throw new Error(`unexpected claim result ${JSON.stringify(never)}`);
    }
  }
}

/**
 * The parent of the executor's span: the job's `traceparent` (the span that dispatched it), else the step's
 * stored context (a job written before migration 0019 carries none), else none (a new trace).
 */
function jobTrace(job: ExecuteJob, row: StepRow): TraceContext | null {
  return parseTraceparent(job.traceparent) ?? storedTrace(row);
}

/**
 * The attempt of a step this process holds the lease of: claimed by {@link executeStep}, or written claimed
 * at intake by the API's inline executor (core's `IntakeClaim`). Calls the tool as the row stores it and
 * records the outcome under the lease; what it throws, and when, is as {@link executeStep} says after its claim.
 * `deliverTo`, asked just before the outcome is recorded, says whether a caller still waits for it: then a
 * settled outcome is recorded delivered (core's `OutcomeRecord.deliver`) and the caller must answer with it.
 */
export async function runClaimedStep(
  d: ExecuteStepDeps,
  row: StepRow,
  parent: TraceContext | null,
  deliverTo?: () => boolean,
): Promise<{ outcome: StepOutcome['status']; recorded: RecordOutcomeResult }> {
  const tool = d.registry.get(row.tool);
  const logger = lazyChildLogger(d.logger, {
    runId: row.run_id,
    stepIdx: row.step_idx,
    key: row.idempotency_key,
  });
  d.crash(CrashPoint.AFTER_CLAIM_BEFORE_TOOL);

  const prepared = prepareCall(tool, row, logger);
  let outcome: StepOutcome;
  if ('outcome' in prepared) {
    outcome = prepared.outcome;
  } else {
    // The span of the call (a child of the dispatching span): its traceparent is what the tool sends.
    const span = startTraceSpan(`saga.execute ${row.tool}`, parent, 'client', {
      'saga.run_id': row.run_id,
      'saga.step_idx': row.step_idx,
      'saga.tool': row.tool,
      'saga.attempt': row.attempts,
    });
    const call = await callTool(
      prepared.tool,
      prepared.args,
      {
        idempotencyKey: row.idempotency_key,
        runId: row.run_id,
        stepIdx: row.step_idx,
        tenantId: row.tenant_id,
        attempt: row.attempts,
        logger,
        traceparent: span.traceparent,
      },
      d.shutdownSignal,
    );
    span.end(call.ok ? undefined : call.error);
    d.crash(CrashPoint.AFTER_TOOL_BEFORE_RECORD);
    outcome = call.ok
      ? { status: StepStatus.CONFIRMED, effect: call.effect }
      : classifyToolError(call.error, call.reason);
    d.metrics?.toolLatency.observe(
      { tool: row.tool, outcome: outcome.status.toLowerCase() },
      call.durationMs / 1000,
    );
    if (!call.ok)
      logger.warn(
        { err: errorForLog(call.error, prepared.tool, prepared.args), outcome: outcome.status },
        'tool call did not return an effect',
      );
  }

  const input = {
    runId: row.run_id,
    stepIdx: row.step_idx,
    leaseOwner: d.workerId,
    outcome,
    schema: d.config.SAGA_DB_SCHEMA,
  };
  let recorded: RecordOutcomeResult;
  if (d.groups) {
    // `deliverTo` is asked here, as the outcome is handed to its statement (see InlineSlot.run).
    const grouped = await d.groups.outcome.submit({ ...input, held: row, deliver: deliverTo?.() === true });
    recorded = grouped ? { kind: 'recorded', row: grouped } : await recordOutcomeSlow(d.db, input);
  } else recorded = await recordOutcome(d.db, input, row);
  if (recorded.kind === 'dropped')
    logger.error(
      { outcome: outcome.status, status: recorded.status },
      'outcome arrived after the step had moved on; kept as an event only',
    );
  else if (recorded.kind === 'late')
    logger.warn({ outcome: outcome.status }, 'effect arrived after the lease expired: UNKNOWN → CONFIRMED');
  d.metrics?.executions.inc({ tool: row.tool, outcome: metricOutcome(outcome, recorded) });
  if (d.metrics) observeSettled(d.metrics, row, outcome, recorded);
  // A settled commit step releases the next one; a definitive failure may unwind the run (its policy). A
  // crash before this line only delays it: the reconciler's sweep follows every such run up.
  if (recorded.kind !== 'dropped' && (row.approval_id !== null || outcome.status === StepStatus.FAILED))
    await followUpRun(d.db, row.run_id, d.config.SAGA_DB_SCHEMA, d.invariants).catch((err: unknown) =>
      logger.error({ err }, 'follow-up of the run failed; the reconciler sweep will retry it'),
    );
  return { outcome: outcome.status, recorded };
}

/**
 * Forward latency (intent committed → outcome recorded, queueing and re-dispatches included), attempts per
 * confirmed effect (1 when nothing was retried), and a duplicate-effect incident when the tool itself
 * reported several effects under the key.
 */
function observeSettled(
  m: ExecutionMetrics,
  claimed: StepRow,
  outcome: StepOutcome,
  recorded: RecordOutcomeResult,
): void {
  if (outcome.status === StepStatus.CONFIRMED && outcome.effect.duplicates?.length)
    m.duplicateEffects.inc({ tool: claimed.tool });
  if (recorded.kind === 'dropped') return;
  const intentAt = new Date(claimed.created_at).getTime();
  m.settleLatency.observe(
    { tool: claimed.tool, outcome: metricOutcome(outcome, recorded) },
    Math.max(0, Date.now() - intentAt) / 1000,
  );
  if (recorded.row.status === StepStatus.CONFIRMED)
    m.attemptsPerEffect.observe({ tool: claimed.tool }, recorded.row.attempts);
}

/**
 * The call as stored, made with today's definition. A definition whose version differs from the one that
 * wrote the row still runs the stored arguments if they parse, unless a person approved the step: then
 * only the approved version runs (`approvedVersionRefusal`: FAILED, nothing sent). When they no longer parse, or the tool is
 * gone from the registry, nothing can be sent: FAILED is honest ("nothing happened"), and the model
 * learns at once rather than waiting on a step no executor can run.
 */
function prepareCall(
  tool: AnyTool | undefined,
  row: StepRow,
  logger: Logger,
): { tool: AnyTool; args: Record<string, unknown> } | { outcome: StepOutcome } {
  if (!tool)
    return {
      outcome: {
        status: StepStatus.FAILED,
        error: {
          code: ErrorCode.UNKNOWN_TOOL,
          message: `tool ${row.tool} is not registered in this executor; nothing was sent`,
        },
      },
    };
  const refused = approvedVersionRefusal(tool.version, row);
  if (refused) {
    logger.error(
      { tool: tool.name, approvedVersion: row.tool_version, version: tool.version },
      'tool version differs from the one the approval bound; nothing sent',
    );
    return { outcome: refused };
  }
  if (tool.version !== row.tool_version)
    logger.warn(
      { tool: tool.name, storedVersion: row.tool_version, version: tool.version },
      'tool definition version differs from the one that wrote the step; running the stored arguments',
    );
  try {
    return { tool, args: parseArgs(tool, row.args) };
  } catch (err) {
    if (!(err instanceof InvalidArgsError)) throw err;
    return {
      outcome: {
        status: StepStatus.FAILED,
        error: {
          code: ErrorCode.STORED_ARGS_INVALID,
          message:
            `the stored arguments (tool version ${row.tool_version}) fail tool version ${tool.version}'s schema ` +
            `at ${err.field}; nothing was sent`,
        },
      },
    };
  }
}

function metricOutcome(outcome: StepOutcome, recorded: RecordOutcomeResult): string {
  if (recorded.kind === 'late') return 'late_confirmed';
  if (recorded.kind === 'dropped') return 'dropped';
  return outcome.status.toLowerCase();
}
