import {
  redactArgs,
  type ApprovalRow,
  type CallDecision,
  type CaseRow,
  type CorrectionRow,
  type RunRow,
  type SagaRegistry,
  type StepEventRow,
  type StepRow,
  type ToolRegistry,
} from '@agent-saga/core';
import { presentApproval, presentCase, presentCorrection } from './present-review.js';
import type { EventView, RunView, StepView } from './schemas.js';

/**
 * Rows of the saga log as camelCase JSON. Arguments that a tool declares secret are redacted here too: the
 * log keeps what executes, an HTTP answer never echoes a credential back.
 */
export function presentStep(
  step: StepRow,
  registry: ToolRegistry,
  decision: CallDecision | null = null,
): StepView {
  return {
    stepIdx: step.step_idx,
    tool: step.tool,
    toolClass: step.tool_class,
    toolVersion: step.tool_version,
    status: step.status,
    idempotencyKey: step.idempotency_key,
    args: redact(registry, step.tool, step.args),
    externalRef: step.external_ref,
    result: step.result,
    error: step.error,
    compensation: step.compensation,
    compensationStatus: step.compensation_status,
    audience: step.audience,
    attempts: step.attempts,
    outcomeDelivered: step.outcome_delivered,
    createdAt: step.created_at.toISOString(),
    updatedAt: step.updated_at.toISOString(),
    stepId: step.step_id,
    decision,
  };
}

export function presentRun(
  run: RunRow,
  steps: readonly StepRow[],
  registry: ToolRegistry,
  review: {
    readonly approvals: readonly ApprovalRow[];
    readonly corrections: readonly CorrectionRow[];
    readonly cases: readonly CaseRow[];
  },
  definitions?: SagaRegistry,
  /** The model's latest decision behind each step (`readStepDecisions`); none when absent. */
  decisions?: ReadonlyMap<number, CallDecision>,
): RunView {
  return {
    runId: run.run_id,
    status: run.status,
    statusReason: run.status_reason,
    cursor: run.cursor,
    metadata: run.metadata,
    createdAt: run.created_at.toISOString(),
    updatedAt: run.updated_at.toISOString(),
    steps: steps.map((s) => presentStep(s, registry, decisions?.get(s.step_idx) ?? null)),
    policy: run.policy,
    ...presentBinding(run, registry, definitions),
    pivotIdx: run.pivot_idx,
    irreversibleBeforePivot: run.irreversible_before_pivot,
    approvals: review.approvals.map((a) => presentApproval(a, steps, registry)),
    corrections: review.corrections.map((c) => presentCorrection(c, steps)),
    cases: review.cases.map((c) => presentCase(c, steps)),
  };
}

/**
 * What a run is bound to (migration 0013): its definition, goal, actor, plan and hash, budget; nulls and
 * `{}` for an unbound run. A planned entry's secret arguments are redacted with its step's tool.
 */
function presentBinding(
  run: RunRow,
  registry: ToolRegistry,
  definitions: SagaRegistry | undefined,
): Pick<RunView, 'definition' | 'goal' | 'actor' | 'plan' | 'planHash' | 'budget'> {
  const definition =
    run.definition_name === null || run.definition_version === null
      ? null
      : { name: run.definition_name, version: run.definition_version };
  const steps = definition ? definitions?.get(definition.name, definition.version)?.steps : undefined;
  const toolOf = (step: string) => steps?.find((s) => s.id === step)?.tool;
  return {
    definition,
    goal: run.goal,
    actor: run.actor,
    plan:
      run.plan?.map((e) => {
        const tool = toolOf(e.step);
        // A step this process cannot name a tool for: its secret paths are unknown, so nothing is shown.
        return { step: e.step, args: tool ? redact(registry, tool, e.args) : '[REDACTED]' };
      }) ?? null,
    planHash: run.plan_hash,
    budget: run.budget,
  };
}

/** An event; `detail.args` (intake and retry events) is redacted with the step's tool. */
export function presentEvent(
  e: StepEventRow,
  toolOf: (stepIdx: number) => string | undefined,
  registry: ToolRegistry,
): EventView {
  const tool = e.step_idx === null ? undefined : toolOf(e.step_idx);
  const detail =
    e.detail && tool && 'args' in e.detail
      ? { ...e.detail, args: redact(registry, tool, e.detail.args) }
      : e.detail;
  return {
    id: String(e.id),
    stepIdx: e.step_idx,
    kind: e.kind,
    from: e.from_status,
    to: e.to_status,
    cause: e.cause,
    detail,
    actor: e.actor,
    at: e.at.toISOString(),
  };
}

function redact(registry: ToolRegistry, toolName: string, args: unknown): unknown {
  const tool = registry.get(toolName);
  return tool ? redactArgs(tool, args) : args;
}
