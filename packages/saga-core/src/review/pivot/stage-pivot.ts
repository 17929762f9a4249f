import type { SagaTrx } from '../../db/connect.js';
import { readDbNow } from '../../db/db-clock.js';
import type { ApprovalRow, RunRow, StepRow } from '../../db/schema.js';
import { PivotStagedError, RunNotRunningError, StepUnresolvedError } from '../../errors/errors.js';
import type { Logger } from '../../process/logger.js';
import { planIntent, type IntentPlan } from '../../steps/intent/plan-intent.js';
import { recordIntent } from '../../steps/intent/record-intent.js';
import { lockRun } from '../../runs/run-rows.js';
import { readRunUsage, type RunUsage } from '../../runs/read-run-usage.js';
import { bindCall } from '../../sagas/bind-call.js';
import type { SagaRegistry } from '../../sagas/saga-registry.js';
import { transitionRun } from '../../runs/transition-run.js';
import { ApprovalKind, ApprovalStatus } from '../approvals/approval-status.js';
import { RunStatus } from '../../runs/run-status.js';
import { StepStatus } from '../../steps/step-status.js';
import { ToolClass } from '../../tools/tool-class.js';
import type { AnyTool } from '../../tools/define-tool.js';
import { redactArgs } from '../../tools/parse-args.js';
import type { ToolRegistry } from '../../tools/tool-registry.js';
import { resourceOf } from '../approvals/approval-resource.js';
import { createApproval } from '../approvals/create-approval.js';
import { lockLivePivot } from './lock-pivot.js';
import { closeApproval, refuseApprovedSteps } from '../approvals/settle-approval.js';

/** One commit step of a pivot, as its caller parsed it: a side-effecting tool and arguments it accepted. */
export interface PivotCommitStep {
  readonly tool: AnyTool;
  /** Parsed by the tool's schema (`parseArgs`): exactly what will execute. */
  readonly args: Record<string, unknown>;
}

export interface StagePivotInput {
  readonly tenantId: string;
  readonly runId: string;
  /** The commit steps, in order; the caller has parsed each and refused pure tools (nothing to approve). */
  readonly commit: readonly PivotCommitStep[];
  readonly summary: string;
  /** Who proposed it (the token's name); recorded on the run's move and on a superseded proposal. */
  readonly actor: string;
  /** The proposing token's id, recorded as `decided_by_token` of a proposal it supersedes (see `Decider`). */
  readonly tokenId?: string | null | undefined;
  readonly registry: ToolRegistry;
  /** The tool module's saga definitions: a bound run's commit steps are matched against its own. */
  readonly definitions?: SagaRegistry | undefined;
  readonly schema: string;
  /** How long a person has to decide (APPROVAL_TTL_MS), unless a staged hold ends sooner. */
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
 * Stages a pivot in the caller's transaction: the commit steps are written as AWAITING_APPROVAL rows with
 * their keys and exact arguments, covered by one approval whose hash binds them, and the run moves to
 * AWAITING_APPROVAL. Nothing is sent until a person approves.
 *
 * Refused, writing nothing: a run that is not RUNNING or AWAITING_APPROVAL (RunNotRunningError), a run
 * whose pivot was approved (PivotStagedError), a run with a step still unresolved (StepUnresolvedError: a
 * person approves a complete picture, not one that may still change); another tenant's or a missing run
 * (NotFoundError, from `lockRun`).
 *
 * A new pivot while one is pending supersedes it: the old approval becomes `superseded` and its steps
 * REJECTED; the new commit steps take the next indices.
 *
 * On a governed run (a definition, a plan, a budget), each commit step meets the rules a call meets
 * (`bindCall`, in order, each counted as taken by the ones after it): a tool the definition does not allow
 * (NOT_IN_DEFINITION), identity arguments other than the plan's (PLAN_MISMATCH), a budget it would pass
 * (BUDGET_EXCEEDED); its definition step is stored. A money hold does not apply: the pivot's own approval
 * is a person's decision on every commit step.
 *
 * The deadline is the earlier of `approvalTtlMs` from now and the end of every hold staged so far (a
 * confirmed step of a tool with `holdWindowMs`, counted from when its intent was written, which is before
 * the hold was placed, so the deadline errs early).
 */
export async function stagePivot(
  trx: SagaTrx,
  req: StagePivotInput,
): Promise<{ run: RunRow; approval: ApprovalRow }> {
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
      tokenId: req.tokenId ?? null,
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
  const stepIds = run.governed ? bindCommitSteps(req, run, base, await readRunUsage(trx, req.runId)) : [];
  const planned = req.commit.map(({ tool, args }, i) => {
    const stepIdx = base + i;
    const plan = planIntent({
      tool,
      args,
      runId: req.runId,
      stepIdx,
      registry: req.registry,
      logger: req.log,
    });
    return { tool, args, stepIdx, plan, stepId: stepIds[i] ?? null };
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
    evidence: {
      ...evidenceOf(planned, steps, req.registry, expiresAt),
      // A run bound to a definition with a plan: the approver reads the plan the run was created with.
      ...(run.plan ? { plan: run.plan, planHash: run.plan_hash } : {}),
    },
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
      stepId: p.stepId,
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

/**
 * The definition step of each commit step of a governed run, by the rules of a call (`bindCall`); each
 * commit step is counted as a step of the run (AWAITING_APPROVAL, not yet sent) by the ones after it, so
 * two commit steps cannot take one definition step and the budget counts them all. Throws the refusal.
 */
function bindCommitSteps(
  req: StagePivotInput,
  run: RunRow,
  base: number,
  usage: RunUsage,
): (string | null)[] {
  let seen = usage;
  return req.commit.map(({ tool, args }, i) => {
    const { stepId } = bindCall({
      run,
      tool,
      args,
      definitions: req.definitions,
      registry: req.registry,
      usage: seen,
    });
    seen = {
      ...seen,
      steps: [
        ...seen.steps,
        {
          stepIdx: base + i,
          tool: tool.name,
          stepId,
          status: StepStatus.AWAITING_APPROVAL,
          attempts: 0,
          args,
          externalRef: null,
          result: null,
        },
      ],
    };
    return stepId;
  });
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

/** What the approver reads: each action, its resource and audience, what is staged, the residual risk. */
function evidenceOf(
  planned: readonly {
    tool: AnyTool;
    args: Record<string, unknown>;
    stepIdx: number;
    plan: Pick<IntentPlan, 'audience'>;
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
