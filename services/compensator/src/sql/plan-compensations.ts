import {
  appendStepEvent,
  CompensationStatus,
  StepEventKind,
  StepStatus,
  ToolClass,
  type SagaTrx,
  type StepRow,
} from '@agent-saga/core';

/** Why a step's compensation is skipped, or null when there is something to undo automatically. */
export function skipReason(step: StepRow): string | null {
  if (step.status !== StepStatus.CONFIRMED) return `nothing to undo: the step is ${step.status}`;
  if (step.tool_class === ToolClass.PURE) return 'nothing to undo: a pure tool';
  if (step.tool_class === ToolClass.IRREVERSIBLE)
    return 'irreversible: never undone automatically (its correction, if any, is queued for a person)';
  if (!step.compensation) return 'no stored compensation: cannot be undone automatically';
  return null;
}

/** Whether the step's effect exists and the plan leaves it in place (named in PARTIALLY_COMPENSATED). */
export function leftInPlace(step: StepRow): boolean {
  return step.status === StepStatus.CONFIRMED && skipReason(step) !== null;
}

/**
 * Writes the compensation row of every step in `steps` that has none yet: `pending` when a CONFIRMED step
 * carries a stored compensation, `skipped` (with the reason) otherwise. Only steps whose forward outcome is
 * final may be passed (never INTENDED, UNKNOWN or MANUAL_INTERVENTION: those are reconciled first).
 *
 * `INSERT … ON CONFLICT DO NOTHING`: a compensator that resumes after a crash, or races another, plans each
 * step once; only the rows this call inserted get their event and their mirror on `saga_log`.
 */
export async function planCompensations(trx: SagaTrx, steps: readonly StepRow[]): Promise<number> {
  if (steps.length === 0) return 0;
  const planned = steps.map((s) => {
    const reason = skipReason(s);
    return {
      run_id: s.run_id,
      step_idx: s.step_idx,
      tenant_id: s.tenant_id,
      tool: reason ? null : s.compensation!.tool,
      idempotency_key: reason ? null : s.compensation!.key,
      args: reason ? null : JSON.stringify(s.compensation!.args),
      status: reason ? CompensationStatus.SKIPPED : CompensationStatus.PENDING,
      reason,
    };
  });
  const inserted = await trx
    .insertInto('compensations')
    .values(planned)
    // No conflict target: a racing planner's row collides on the primary key (run, step) or, first, on the
    // compensation's UNIQUE key (derived from the same run and step); both mean "planned already". A target
    // of (run_id, step_idx) alone lets the key's unique violation through as an error.
    .onConflict((oc) => oc.doNothing())
    .returning(['run_id', 'step_idx', 'status', 'reason', 'tool', 'idempotency_key'])
    .execute();
  for (const r of inserted) {
    await trx
      .updateTable('saga_log')
      .set({ compensation_status: r.status })
      .where('run_id', '=', r.run_id)
      .where('step_idx', '=', r.step_idx)
      .execute();
    await appendStepEvent(trx, {
      runId: r.run_id,
      stepIdx: r.step_idx,
      kind: StepEventKind.COMPENSATION,
      from: null,
      to: r.status,
      cause: 'compensator: planned',
      detail: r.reason ? { reason: r.reason } : { tool: r.tool, key: r.idempotency_key },
    });
  }
  return inserted.length;
}
