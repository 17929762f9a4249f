import {
  assertRunInScope,
  getRunFor,
  parseCallArgs,
  parseTraceparent,
  readRunCursor,
  redispatchBudgetOf,
  requireDefinition,
  requireToolInDefinition,
  SETTLED_STEP_STATUSES,
  startTraceSpan,
  ToolClass,
  type ExecuteDispatch,
  type Logger,
  type Principal,
  type StepRow,
  type StepStatus,
} from '@agent-saga/core';
import type { ApiMetrics } from '../metrics/api-metrics.js';
import type { ApiDeps } from './api-deps.js';
import { awaitSettle } from './await-settle.js';
import { callIntake, type IntakeRequest } from './call-intake.js';
import { groupedIntake, type IntakeGroup } from './grouped-intake.js';
import { isInFlight, isUnresolved, presentCallOutcome, type CallAnswer } from './call-outcome.js';
import { publishFast } from './dispatch.js';
import { resolveByLookup } from './inline-lookup.js';
import { runPureTool } from './run-pure-tool.js';
import type { CallBody } from './schemas.js';
import type { SettleWaiter } from './settle-waiter.js';
import type { DeliveryGroup } from './delivery-group.js';
import type { InlineSlot } from '../executor/inline-executor.js';

export interface CallContext extends ApiDeps {
  readonly waiter: SettleWaiter;
  readonly metrics: ApiMetrics;
  /**
   * Groups the reads of requests ready to answer (woken at the same time) into one statement, which marks
   * the settled outcomes they carry delivered in the same commit.
   */
  readonly deliveries: DeliveryGroup;
  /** Groups the intakes of concurrent calls that each name a new step into one statement. */
  readonly intakes: IntakeGroup;
}

/**
 * POST /v1/runs/{runId}/calls, from a validated body to the answer:
 * 1. the tool and its arguments are checked (400s; nothing written); a run outside an own-runs token's
 *    scope is 404 like an absent one, read before anything is written (`getRunFor`, `assertRunInScope`);
 * 2. a pure tool runs at once, no row;
 * 3. otherwise, in the intake's span (a child of the caller's `traceparent`, whose context a new step is
 *    stored and dispatched with), for a call that names a new step, the grouped intake (see `groupedIntake`), and for
 *    anything it cannot decide alone the intake transaction (see `callIntake`), then, for a retry of an
 *    unsettled step, the inline lookup (see `resolveByLookup`);
 * 4. the step's key is watched, the fast path publishes what this call committed, and the answer waits up to
 *    `waitMs` for a NOTIFY that the step settled (a retry of an unknown step, also for its resolution);
 * 5. a settled outcome in the answer is marked delivered, which moves the run's cursor: after a wait, by the
 *    read that found it settled (one statement, see `DeliveryGroup`), otherwise here.
 */
export async function handleCall(
  ctx: CallContext,
  principal: Principal,
  runId: string,
  body: CallBody,
  log: Logger,
  traceparent?: unknown,
): Promise<CallAnswer> {
  const tool = ctx.registry.require(body.tool);
  const args = parseCallArgs(tool, body.args);
  if (tool.class === ToolClass.PURE) {
    const run = await getRunFor(ctx.db, principal, runId);
    // A bound run reads only what its definition allows, too (a pure call leaves no row to refuse later).
    if (run.definition_name !== null) requireToolInDefinition(requireDefinition(ctx.definitions, run), tool);
    const answer = await runPureTool({
      tool,
      args,
      runId,
      tenantId: principal.tenantId,
      stepIdx: body.stepIdx ?? (await readRunCursor(ctx.db, runId)) ?? run.cursor_floor,
      log,
    });
    ctx.metrics.calls.inc({ tool: tool.name, outcome: 'PURE' });
    return answer;
  }

  // Before the intake: another token's run never gets a row, an event or an outbox message from this call.
  await assertRunInScope(ctx.db, principal, runId);
  const intakeStartedAt = performance.now();
  // The intake's span, a child of the caller's traceparent (absent or invalid: a new trace, never a 400).
  const span = startTraceSpan('saga.intake', parseTraceparent(traceparent), 'server', {
    'saga.run_id': runId,
    'saga.tool': tool.name,
  });
  const redispatchBudget = redispatchBudgetOf(ctx.config);
  const request: IntakeRequest = {
    tenantId: principal.tenantId,
    runId,
    tool,
    args,
    stepIdx: body.stepIdx,
    dependsOn: body.dependsOn,
    decision: body.decision,
    trace: span.context,
    registry: ctx.registry,
    definitions: ctx.definitions,
    schema: ctx.schema,
    log,
    fastPath: ctx.config.SAGA_FAST_PATH,
    approvalTtlMs: ctx.config.APPROVAL_TTL_MS,
    relayGraceMs: ctx.config.RELAY_GRACE_MS,
    redispatchBudget,
    maxStepsPerRun: ctx.config.SAGA_MAX_STEPS_PER_RUN,
  };
  // With inline execution, a call the grouped intake can take is written claimed by this process.
  const slot = ctx.inline && request.fastPath && body.stepIdx !== undefined ? ctx.inline.reserve(tool) : null;
  let intake;
  let claimed: InlineSlot | null = null;
  try {
    const grouped = await groupedIntake(ctx.intakes, request, slot?.claim);
    if (grouped?.kind === 'step' && slot && grouped.step.lease_owner === slot.claim.owner) claimed = slot;
    else slot?.release();
    intake = grouped ?? (await ctx.db.transaction().execute((trx) => callIntake(trx, request)));
  } catch (err) {
    slot?.release();
    span.end(err);
    throw err;
  }
  span.end();
  const committedAt = performance.now();
  if (intake.kind === 'refused') throw intake.error;
  const { step, replayed, dispatch, delivered } =
    intake.kind === 'lookup'
      ? {
          ...(await resolveByLookup({
            db: ctx.db,
            schema: ctx.schema,
            tenantId: principal.tenantId,
            tool,
            step: intake.step,
            recheckMs: ctx.config.LOOKUP_RECHECK_MS,
            redispatchBudget,
            log,
          })),
          delivered: false,
        }
      : intake;

  const waitMs = body.waitMs ?? ctx.config.CALL_WAIT_DEFAULT_MS;
  // A retry of an unknown step waits for the reconciler's answer too (see `isUnresolved`).
  const waitsThrough = intake.kind === 'lookup' ? isUnresolved : isInFlight;
  const settled = claimed
    ? await settleHere(ctx, step, claimed, waitMs)
    : await settle(ctx, step, dispatch, intakeStartedAt, waitMs, log, waitsThrough);
  if (dispatch && isSettled(settled.status))
    ctx.metrics.dispatchLatency.observe({ tool: tool.name }, (performance.now() - committedAt) / 1000);
  if (isSettled(settled.status) && !delivered && !settled.outcome_delivered)
    await ctx.deliveries.submit({ tenantId: principal.tenantId, runId, stepIdx: settled.step_idx });
  const answer = presentCallOutcome(settled, replayed);
  ctx.metrics.calls.inc({ tool: tool.name, outcome: answer.body.status });
  log.info(
    { runId, stepIdx: settled.step_idx, key: settled.idempotency_key, status: settled.status, replayed },
    'call answered',
  );
  return answer;
}

/**
 * Publishes (fast path), or runs the step here (`ctx.inline`), and waits for the step, watching its key
 * first so no NOTIFY is missed.
 *
 * The step is read again after the watch opens, unless nothing but this call can have moved it since the
 * intake read it: with the fast path, a step this call just dispatched reaches an executor only through
 * the publish (or the inline run) below (the relay leaves outbox rows younger than RELAY_GRACE_MS to the
 * API; half of it is the margin for the two clocks), so until then it is still the INTENDED row the intake
 * wrote.
 */
async function settle(
  ctx: CallContext,
  step: StepRow,
  dispatch: ExecuteDispatch | null,
  intakeStartedAt: number,
  waitMs: number,
  log: Logger,
  waitsThrough: (status: StepStatus) => boolean,
): Promise<StepRow> {
  if (!dispatch && !waitsThrough(step.status)) return step;
  const watch = ctx.waiter.watch(step.idempotency_key);
  const unseen =
    dispatch !== null &&
    ctx.config.SAGA_FAST_PATH &&
    performance.now() - intakeStartedAt < ctx.config.RELAY_GRACE_MS / 2;
  try {
    if (dispatch && ctx.config.SAGA_FAST_PATH && !ctx.inline?.execute(dispatch))
      await publishFast(ctx.queue, dispatch, log, ctx.config.FAST_PATH_PUBLISH_TIMEOUT_MS);
    return await awaitSettle(
      ctx.deliveries,
      watch,
      { tenantId: step.tenant_id, runId: step.run_id, stepIdx: step.step_idx },
      waitMs,
      unseen ? step : undefined,
      waitsThrough,
    );
  } finally {
    watch.close();
  }
}

/**
 * The attempt of a step the intake wrote claimed by this process's inline executor, and the wait for it:
 * the recorded row comes straight from the attempt, so the answer needs neither the NOTIFY nor a read, and
 * a settled outcome is marked delivered by the outcome's own statement. Until then the request waits on a
 * watch that no notification wakes (`watchDrain`): only `waitMs` or the API draining end it early.
 *
 * The hand-off decides who sees the outcome, once: when the attempt is about to record, it asks whether this
 * request still waits; yes (`taken`) binds the request to answer with the recorded row, however long the
 * statement takes, because the row is then recorded delivered and the run's cursor moves past it. If the
 * wait ends first (`waitMs`, or the API draining), the request gives up (`gone`), the attempt goes on and
 * records undelivered, and the step is read as it is, through the delivery group, as is a step whose
 * outcome the attempt did not record: that read happens under a watch of its key opened first, so no
 * NOTIFY after it is missed.
 */
async function settleHere(
  ctx: CallContext,
  step: StepRow,
  slot: InlineSlot,
  waitMs: number,
): Promise<StepRow> {
  const deadline = Date.now() + waitMs;
  let handoff: 'waiting' | 'taken' | 'gone' = 'waiting';
  const deliverTo = (): boolean => {
    if (handoff !== 'waiting') return false;
    handoff = 'taken';
    return true;
  };
  let row: StepRow | null = null;
  const drain = ctx.waiter.watchDrain();
  try {
    const ran = slot.run(step, deliverTo).then((row) => ({ row }));
    for (;;) {
      const left = deadline - Date.now();
      const woke = await Promise.race([ran, left > 0 ? drain.next(left) : ('timeout' as const)]);
      if (typeof woke === 'object') {
        row = woke.row;
        break;
      }
      // Every watch is woken when the LISTEN session comes back: nothing to look at here.
      if (woke === 'notified') continue;
      if (handoff === 'waiting') {
        handoff = 'gone';
        break;
      }
      row = (await ran).row; // taken: the outcome is being recorded for this answer
      break;
    }
  } finally {
    drain.close();
  }
  if (row && !isInFlight(row.status)) return row;
  const watch = ctx.waiter.watch(step.idempotency_key);
  try {
    return await awaitSettle(
      ctx.deliveries,
      watch,
      { tenantId: step.tenant_id, runId: step.run_id, stepIdx: step.step_idx },
      Math.max(0, deadline - Date.now()),
    );
  } finally {
    watch.close();
  }
}

function isSettled(status: StepStatus): boolean {
  return (SETTLED_STEP_STATUSES as readonly StepStatus[]).includes(status);
}
