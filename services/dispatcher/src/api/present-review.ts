import {
  correctionHash,
  redactArgs,
  stepRedaction,
  TokenRole,
  type ApprovalRow,
  type CaseRow,
  type CorrectionRow,
  type StepRow,
  type ToolRegistry,
  type Viewer,
} from '@agent-saga/core';
import type { ApprovalView, CaseView, CorrectionView } from './schemas.js';

/**
 * The items people decide on, as camelCase JSON: approvals (with the exact steps they release), cases and
 * corrections (with the tool of the step they concern). `steps` are the run's steps, read once by the
 * caller; secret arguments are redacted as everywhere else.
 */
export function presentApproval(
  a: ApprovalRow,
  steps: readonly StepRow[],
  registry: ToolRegistry,
  /**
   * Who reads: an operator in the review queues (the default) sees personal fields; an agent reading its
   * run's approvals in the run view reads them redacted, as in the rest of the view (`stepRedaction`).
   */
  viewer: Viewer = TokenRole.OPERATOR,
): ApprovalView {
  const byIdx = new Map(steps.map((s) => [s.step_idx, s]));
  const quoted = steps.filter((s) => a.steps.includes(s.step_idx));
  return {
    id: a.id,
    runId: a.run_id,
    kind: a.kind,
    status: a.status,
    hash: a.hash,
    expiresAt: a.expires_at.toISOString(),
    // The summary names the held steps' values (an amount, a recipient): scrubbed like them.
    summary: quoted.reduce<string | null>(
      (text, q) => stepRedaction(registry, q, viewer).text(text) as string | null,
      a.summary,
    ),
    steps: a.steps.flatMap((i) => {
      const s = byIdx.get(i);
      if (!s) return [];
      return [
        {
          stepIdx: s.step_idx,
          tool: s.tool,
          toolClass: s.tool_class,
          idempotencyKey: s.idempotency_key,
          args: stepRedaction(registry, s, viewer).args(s.args),
          audience: s.audience,
          status: s.status,
        },
      ];
    }),
    evidence: presentEvidence(a, registry),
    decidedBy: a.decided_by,
    decidedByTokenId: a.decided_by_token,
    decidedAt: a.decided_at?.toISOString() ?? null,
    comment: a.comment,
    createdAt: a.created_at.toISOString(),
  };
}

/**
 * An approval's evidence as a person reads it: a renewal's recovery plan (its actions' arguments, which a
 * re-dispatch stores as the step stored them) and a held compensation's intended action have their secret
 * arguments redacted by their tools, like the steps. The hash stays the hash of what will be sent.
 */
function presentEvidence(a: ApprovalRow, registry: ToolRegistry): Record<string, unknown> {
  const redacted = (x: unknown): unknown => {
    if (x === null || typeof x !== 'object') return x;
    const act = x as { tool?: unknown; args?: unknown };
    const tool = typeof act.tool === 'string' ? registry.get(act.tool) : undefined;
    return tool && act.args !== undefined ? { ...act, args: redactArgs(tool, act.args) } : x;
  };
  const e = a.evidence;
  return {
    ...e,
    ...(Array.isArray(e.recoveryPlan) ? { recoveryPlan: e.recoveryPlan.map(redacted) } : {}),
    ...(e.action !== undefined ? { action: redacted(e.action) } : {}),
  };
}

/**
 * A case as the operator queue shows it. With `registry`, the secret values of its step (its tool's
 * `secret` arguments) are replaced wherever the evidence quotes them; personal data stays (operators only).
 */
export function presentCase(c: CaseRow, steps: readonly StepRow[], registry?: ToolRegistry): CaseView {
  const step = c.step_idx === null ? undefined : steps.find((s) => s.step_idx === c.step_idx);
  return {
    id: String(c.id),
    runId: c.run_id,
    stepIdx: c.step_idx,
    tool: c.step_idx === null ? null : (steps.find((s) => s.step_idx === c.step_idx)?.tool ?? null),
    reason: c.reason,
    evidence:
      registry && step
        ? (stepRedaction(registry, step, TokenRole.OPERATOR).text(c.evidence) as CaseView['evidence'])
        : c.evidence,
    status: c.status,
    resolvedBy: c.resolved_by,
    resolvedByTokenId: c.resolved_by_token,
    resolvedAt: c.resolved_at?.toISOString() ?? null,
    resolution: c.resolution,
    createdAt: c.created_at.toISOString(),
  };
}

export function presentCorrection(c: CorrectionRow, steps: readonly StepRow[]): CorrectionView {
  return {
    id: String(c.id),
    runId: c.run_id,
    stepIdx: c.step_idx,
    tool: steps.find((s) => s.step_idx === c.step_idx)?.tool ?? null,
    command: c.command,
    audience: c.audience,
    status: c.status,
    hash: correctionHash(c.command),
    idempotencyKey: c.idempotency_key,
    externalRef: c.external_ref,
    decidedBy: c.decided_by,
    decidedByTokenId: c.decided_by_token,
    decidedAt: c.decided_at?.toISOString() ?? null,
    comment: c.comment,
    createdAt: c.created_at.toISOString(),
  };
}
