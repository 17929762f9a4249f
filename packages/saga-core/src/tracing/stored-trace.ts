import type { TraceContext } from './trace-context.js';

/**
 * How a step's trace context is stored (migration 0019): `saga_log.trace_id` (16 bytes) and
 * `saga_log.span_id` (8 bytes, the intake's span, parent of every later span of the step), and
 * `step_events.trace_id`. bytea, not the 32 + 16 hex characters: the row is written four times per call
 * (intake, claim, outcome, delivered) and each version goes to the WAL whole, so 26 bytes rather than 50.
 */
export interface StoredTraceColumns {
  readonly trace_id?: Buffer | null;
  readonly span_id?: Buffer | null;
}

/** The step's stored trace context, or null for a step written before migration 0019. */
export function storedTrace(row: StoredTraceColumns): TraceContext | null {
  if (!row.trace_id || !row.span_id) return null;
  return { traceId: row.trace_id.toString('hex'), spanId: row.span_id.toString('hex'), flags: 1 };
}

/** `ctx` as the columns store it. */
export function traceColumns(ctx: TraceContext): { trace_id: Buffer; span_id: Buffer } {
  return { trace_id: Buffer.from(ctx.traceId, 'hex'), span_id: Buffer.from(ctx.spanId, 'hex') };
}

/** A stored trace id as the views show it (32 hex characters), or null. */
export function traceIdHex(traceId: Buffer | null | undefined): string | null {
  return traceId ? traceId.toString('hex') : null;
}
