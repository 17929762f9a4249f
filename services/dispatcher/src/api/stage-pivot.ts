import {
  ApprovalKind,
  ApprovalStatus,
  closeApproval,
  createApproval,
  InvalidArgsError,
  lockLivePivot,
  lockRun,
  parseArgs,
  PivotStagedError,
  readDbNow,
  recordIntent,
  redactArgs,
  refuseApprovedSteps,
  RunNotRunningError,
  RunStatus,
  StepStatus,
  StepUnresolvedError,
  ToolClass,
  ToolNotRegisteredError,
  transitionRun,
  type AnyTool,
  type ApprovalRow,
  type Logger,
  type RunRow,
  type SagaTrx,
  type StepRow,
  type ToolRegistry,
} from '@agent-saga/core';
import { BadRequestError } from './api-errors.js';
import { resourceOf } from './hold-for-approval.js';
import { planIntent } from './intent-plan.js';

export interface PivotRequest {
  readonly tenantId: string;
  readonly runId: string;
  readonly commit: readonly { readonly tool: string; readonly args: Record<string, unknown> }[];
  readonly summary: string;
  readonly actor: string;
  readonly registry: ToolRegistry;
  readonly schema: string;
  readonly approvalTtlMs: number;
  readonly log: Logger;
}

/** Steps that are done before a pivot: nothing is on its way or waiting for a person. */
const SETTLED_BEFORE_PIVOT = new Set<string>([
  StepStatus.CONFIRMED,
  StepStatus.FAILED,
  StepStatus.NOT_EXECUTED,
  StepStatus.REJECTED,
]);

/**
 * Stages a pivot in one transaction: the commit steps are written as AWAITING_APPROVAL rows with their keys
 * and exact arguments, covered by one approval whose hash binds them, and the run moves to
 * AWAITING_APPROVAL. Nothing is sent until a person approves.
 *
 * Refused, writing nothing: a run that is not RUNNING or AWAITING_APPROVAL (409 RUN_NOT_RUNNING), a run whose
 * pivot was approved (409 PIVOT_STAGED), a run with a step still unresolved (409 STEP_UNRESOLVED: a person
 * approves a complete picture, not one that may still change), an unknown tool or bad arguments (400 naming
 * `commit[i].…`), a pure commit step (400: nothing to approve).
 *
 * A new pivot while one is pending supersedes it: the old approval becomes `superseded` and its steps
 * REJECTED; the new commit steps take the next indices.
 *
 * The deadline is the earlier of `approvalTtlMs` from now and the end of every hold staged so far (a
 * confirmed step of a tool with `holdWindowMs`, counted from when its intent was written, which is before
 * the hold was placed, so the deadline errs early).
 */
export async function stagePivot(
  trx: SagaTrx,
  req: PivotRequest,
): Promise<{ run: RunRow; approval: ApprovalRow }> {
  const tools = req.commit.map((c, i) => commitTool(req.registry, c, i));
  const run = await lockRun(trx, req.tenantId, req.runId);
  const pending = await lockLivePivot(trx, req.runId);
  if (pending?.status === ApprovalStatus.APPROVED) throw new PivotStagedError(req.runId, pending.id);
  const resumable =
    run.status === RunStatus.RUNNING || (run.status === RunStatus.AWAITING_APPROVAL && pending);
  if (!resumable) throw new RunNotRunningError(req.runId, run.status);

  if (pending) {
    const superseded = await closeApproval(trx, {
      approval: pending,
      to: ApprovalStatus.SUPERSEDED,
      actor: req.actor,
      comment: 'a new pivot replaced this proposal',
    });
    if (superseded)
      await refuseApprovedSteps(trx, superseded, ApprovalStatus.SUPERSEDED, req.actor, req.schema);
  }
  const steps = await trx
    .selectFrom('saga_log')
    .selectAll()
    .where('run_id', '=', req.runId)
    .orderBy('step_idx')
    .execute();
  const open = steps.find((s) => !SETTLED_BEFORE_PIVOT.has(s.status));
  if (open)
    throw new StepUnresolvedError(
      open.step_idx,
      `step ${open.step_idx} (${open.tool}) is ${open.status}; a pivot is proposed once every step before it is settled`,
    );

  const base = steps.length ? steps[steps.length - 1]!.step_idx + 1 : 0;
  const planned = tools.map(({ tool, args }, i) => {
    const stepIdx = base + i;
    const plan = planIntent({
      tool,
      args,
      runId: req.runId,
      stepIdx,
      registry: req.registry,
      logger: req.log,
    });
    return { tool, args, stepIdx, plan };
  });
  const expiresAt = deadline(steps, req.registry, req.approvalTtlMs, await readDbNow(trx));
  const approval = await createApproval(trx, {
    tenantId: req.tenantId,
    runId: req.runId,
    kind: ApprovalKind.PIVOT,
    steps: planned.map((p) => ({
      stepIdx: p.stepIdx,
      tool: p.tool.name,
      toolVersion: p.tool.version,
      key: p.plan.idempotencyKey,
      args: p.args,
    })),
    summary: req.summary,
    evidence: evidenceOf(planned, steps, req.registry, expiresAt),
    expiresAt,
  });
  for (const p of planned)
    await recordIntent(trx, {
      runId: req.runId,
      stepIdx: p.stepIdx,
      tenantId: req.tenantId,
      tool: p.tool.name,
      toolClass: p.tool.class,
      toolVersion: p.tool.version,
      idempotencyKey: p.plan.idempotencyKey,
      args: p.args,
      payloadHash: p.plan.payloadHash,
      compensation: p.plan.compensation,
      correction: p.plan.correction,
      audience: p.plan.audience,
      dependsOn: null,
      status: StepStatus.AWAITING_APPROVAL,
      approvalId: approval.id,
      schema: req.schema,
    });
  await trx.updateTable('runs').set({ pivot_idx: base }).where('run_id', '=', req.runId).execute();
  const moved =
    run.status === RunStatus.RUNNING
      ? await transitionRun(trx, {
          runId: req.runId,
          to: RunStatus.AWAITING_APPROVAL,
          reason: `pivot ${approval.id} proposed: ${req.summary}`,
          actor: req.actor,
        })
      : { ...run, pivot_idx: base };
  return { run: moved, approval };
}

function commitTool(
  registry: ToolRegistry,
  c: { readonly tool: string; readonly args: Record<string, unknown> },
  i: number,
): { tool: AnyTool; args: Record<string, unknown> } {
  const tool = registry.get(c.tool);
  if (!tool) {
    const err = new ToolNotRegisteredError(c.tool);
    throw new BadRequestError(`commit.${i}.tool`, `commit.${i}.tool: ${err.message}`);
  }
  if (tool.class === ToolClass.PURE)
    throw new BadRequestError(
      `commit.${i}.tool`,
      `commit.${i}.tool: ${c.tool} is pure; call it, it needs no approval`,
    );
  try {
    return { tool, args: parseArgs(tool, c.args) };
  } catch (err) {
    if (err instanceof InvalidArgsError)
      throw new BadRequestError(
        `commit.${i}.${err.field}`,
        `commit.${i}.${err.field}: ${err.message}`,
        err.issues.map((x) => ({ field: `commit.${i}.${x.field}`, message: x.message })),
      );
    throw err;
  }
}

/**
 * The approval's deadline, on the database's clock (`dbNow`, read in the staging transaction; the holds'
 * `created_at` are the database's too): the expiry sweep and the decision compare it with `now()`.
 */
function deadline(steps: readonly StepRow[], registry: ToolRegistry, ttlMs: number, dbNow: Date): Date {
  let end = dbNow.getTime() + ttlMs;
  for (const s of steps) {
    const hold = s.status === StepStatus.CONFIRMED ? registry.get(s.tool)?.holdWindowMs : undefined;
    if (hold !== undefined) end = Math.min(end, s.created_at.getTime() + hold);
  }
  return new Date(end);
}

function evidenceOf(
  planned: readonly {
    tool: AnyTool;
    args: Record<string, unknown>;
    stepIdx: number;
    plan: { audience: readonly string[] };
  }[],
  steps: readonly StepRow[],
  registry: ToolRegistry,
  expiresAt: Date,
): Record<string, unknown> {
  const audience = [...new Set(planned.flatMap((p) => p.plan.audience))];
  const irreversible = planned.filter((p) => p.tool.class === ToolClass.IRREVERSIBLE).map((p) => p.tool.name);
  const staged = steps
    .filter((s) => s.status === StepStatus.CONFIRMED)
    .map((s) => ({
      stepIdx: s.step_idx,
      tool: s.tool,
      class: s.tool_class,
      externalRef: s.external_ref,
      holdEndsAt:
        registry.get(s.tool)?.holdWindowMs === undefined
          ? null
          : new Date(s.created_at.getTime() + registry.get(s.tool)!.holdWindowMs!).toISOString(),
    }));
  return {
    actions: planned.map((p) => ({
      stepIdx: p.stepIdx,
      tool: p.tool.name,
      class: p.tool.class,
      args: redactArgs(p.tool, p.args),
      resource: resourceOf(p.args),
      audience: p.plan.audience,
    })),
    audience,
    staged,
    residualRisk: irreversible.length
      ? `${irreversible.join(', ')} cannot be undone once sent; after approval the run only rolls forward`
      : 'after approval the run only rolls forward; a failed commit step is repaired, not rolled back',
    deadline: expiresAt.toISOString(),
  };
}
