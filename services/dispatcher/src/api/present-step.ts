import {
  redactCorrectionCommand,
  redactStep,
  stepRedaction,
  traceIdHex,
  type ApprovalRow,
  type CallDecision,
  type CaseRow,
  type CorrectionRow,
  type RunRow,
  type SagaRegistry,
  type StepEventRow,
  type StepRow,
  type ToolRegistry,
  type Viewer,
} from '@agent-saga/core';
import { presentApproval, presentCase, presentCorrection } from './present-review.js';
import type { CaseView, EventView, RunView, StepView } from './schemas.js';

/**
 * Rows of the saga log as camelCase JSON, redacted for `viewer` by core's rule (`redactStep`): secret
 * arguments for everyone (the log keeps what executes, an HTTP answer never echoes a credential back), and
 * personal data for agent tokens, in the arguments, the result, the error and the compensation.
 */
export function presentStep(
  row: StepRow,
  registry: ToolRegistry,
  viewer: Viewer,
  decision: CallDecision | null = null,
): StepView {
  const step = redactStep(row, registry, viewer);
  return {
    stepIdx: step.step_idx,
    tool: step.tool,
    toolClass: step.tool_class,
    toolVersion: step.tool_version,
    status: step.status,
    idempotencyKey: step.idempotency_key,
    args: step.args,
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
    traceId: traceIdHex(row.trace_id),
  };
}

export function presentRun(
  /** The run, with its cursor as core computes it (`readRunCursor`; the row holds only a floor). */
  run: RunRow & { readonly cursor: number },
  steps: readonly StepRow[],
  registry: ToolRegistry,
  review: {
    readonly approvals: readonly ApprovalRow[];
    readonly corrections: readonly CorrectionRow[];
    readonly cases: readonly CaseRow[];
  },
  definitions: SagaRegistry | undefined,
  /** The model's latest decision behind each step (`readStepDecisions`); none when absent. */
  decisions: ReadonlyMap<number, CallDecision> | undefined,
  /** Who reads: personal data is shown to operators only (see core's `redact-personal.ts`). */
  viewer: Viewer,
): RunView {
  const redactionAt = (stepIdx: number | null) => {
    const s = stepIdx === null ? undefined : steps.find((x) => x.step_idx === stepIdx);
    return s ? stepRedaction(registry, s, viewer) : undefined;
  };
  return {
    runId: run.run_id,
    status: run.status,
    statusReason: run.status_reason,
    cursor: run.cursor,
    metadata: run.metadata,
    createdAt: run.created_at.toISOString(),
    updatedAt: run.updated_at.toISOString(),
    steps: steps.map((s) => presentStep(s, registry, viewer, decisions?.get(s.step_idx) ?? null)),
    policy: run.policy,
    ...presentBinding(run, registry, definitions, viewer),
    pivotIdx: run.pivot_idx,
    irreversibleBeforePivot: run.irreversible_before_pivot,
    approvals: review.approvals.map((a) => presentApproval(a, steps, registry, viewer)),
    // A correction is a message to a person (its recipient and variables are personal); a case's evidence
    // may quote the step's values (a lookup's answer, an error): both redacted like the step itself.
    corrections: review.corrections.map((c) => {
      const view = presentCorrection(c, steps);
      const r = redactionAt(c.step_idx);
      const command = r ? (r.text(view.command) as typeof view.command) : view.command;
      return { ...view, command: redactCorrectionCommand(command, viewer) };
    }),
    cases: review.cases.map((c) => {
      const view = presentCase(c, steps);
      const r = redactionAt(c.step_idx);
      return r ? { ...view, evidence: r.text(view.evidence) as CaseView['evidence'] } : view;
    }),
  };
}

/**
 * What a run is bound to (migration 0013): its definition, goal, actor, plan and hash, budget; nulls and
 * `{}` for an unbound run. A planned entry's arguments are redacted for `viewer` with its step's tool.
 */
function presentBinding(
  run: RunRow,
  registry: ToolRegistry,
  definitions: SagaRegistry | undefined,
  viewer: Viewer,
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
        return {
          step: e.step,
          args: tool ? stepRedaction(registry, { tool, args: e.args }, viewer).args(e.args) : '[REDACTED]',
        };
      }) ?? null,
    planHash: run.plan_hash,
    budget: run.budget,
  };
}

/**
 * An event, redacted for `viewer` with its step: `detail.args` (intake and retry events) by the tool's
 * argument paths, `detail.result` by its result paths, and every value of the step's that the detail
 * quotes elsewhere (a lookup's evidence, an error) wherever it appears.
 */
export function presentEvent(
  e: StepEventRow,
  stepOf: (stepIdx: number) => EventStep | undefined,
  registry: ToolRegistry,
  viewer: Viewer,
): EventView {
  const step = e.step_idx === null ? undefined : stepOf(e.step_idx);
  const r = step ? stepRedaction(registry, step, viewer) : undefined;
  const detail =
    e.detail && r
      ? (r.text({
          ...e.detail,
          ...('args' in e.detail ? { args: r.args(e.detail.args) } : {}),
          ...('result' in e.detail ? { result: r.result(e.detail.result) } : {}),
        }) as typeof e.detail)
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

/** What an event is redacted with: its step's tool and stored data (`readStepTools`). */
export interface EventStep {
  readonly tool: string;
  readonly args: unknown;
  readonly result: unknown;
}
