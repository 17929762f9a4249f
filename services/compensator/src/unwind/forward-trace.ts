import type { StepRow, StoredTraceColumns } from '@agent-saga/core';
import type { CompensationPass } from './compensation-pass.js';

/**
 * The stored trace context of the forward step a pass compensates (from the run's steps the pass read), so
 * the compensation's call and its lookups are spans of the step's trace and send its `traceparent`. Empty
 * for a step stored without one (before migration 0019): their spans then start a trace of their own.
 */
export function forwardTrace(pass: Pick<CompensationPass, 'comp' | 'steps'>): StoredTraceColumns {
  const step: StepRow | undefined = pass.steps.find((s) => s.step_idx === pass.comp.step_idx);
  return step ? { trace_id: step.trace_id, span_id: step.span_id } : {};
}
