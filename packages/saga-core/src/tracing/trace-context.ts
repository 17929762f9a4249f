import { randomFillSync } from 'node:crypto';

/**
 * A W3C trace context (https://www.w3.org/TR/trace-context/): the trace a call belongs to and the span it
 * runs in, as lowercase hex. The one concept every pool carries: the API stores it with the intent, the
 * execute job carries it as `traceparent`, a tool sends it to the vendor (`ToolContext.traceparent`).
 *
 * Parsed and generated here without an OpenTelemetry SDK: with no exporter configured, none is started
 * (the hot path's CPU budget, issue 10), yet every step still gets a trace id, stored and propagated.
 */
export interface TraceContext {
  /** 32 lowercase hex characters (16 bytes), not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex characters (8 bytes), not all zero: the span this context's holder runs in. */
  readonly spanId: string;
  /** The trace flags byte; bit 0 is `sampled`. */
  readonly flags: number;
}

/** Sampled: without a sampler of our own, every trace is recorded (an exporter may still drop it). */
const SAMPLED = 0x01;

/**
 * Version 00 only, lowercase hex only, exactly 55 characters. A later version may carry more fields after
 * the flags; we do not guess at them: anything but a well-formed 00 header starts a new trace.
 */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * The context a `traceparent` header names, or null when it is absent or not a valid version-00 header
 * (upper-case hex, a zero id, a wrong length, another version). Never throws: a bad header starts a new
 * trace, it is never a 400 (the caller's tracing must not break its calls).
 */
export function parseTraceparent(header: unknown): TraceContext | null {
  if (typeof header !== 'string' || header.length !== 55) return null;
  const m = TRACEPARENT.exec(header);
  if (!m) return null;
  const [, traceId, spanId, flags] = m as unknown as [string, string, string, string];
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
  return { traceId, spanId, flags: Number.parseInt(flags, 16) };
}

/** The `traceparent` header of `ctx` (version 00). */
export function formatTraceparent(ctx: TraceContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.flags.toString(16).padStart(2, '0')}`;
}

/**
 * Random bytes for ids, drawn from a pool filled 4 KiB at a time. Why a pool: one `randomBytes` call per id
 * costs a few microseconds each (a system call and a buffer), and every call makes two or three ids on the
 * hot path; one fill serves ~170 root contexts. The bytes are cryptographically random all the same.
 */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let poolOffset = POOL_BYTES;

/** A fresh, non-zero id of `bytes` random bytes, as lowercase hex. */
function randomId(bytes: number, zero: string): string {
  for (;;) {
    if (poolOffset + bytes > POOL_BYTES) {
      randomFillSync(pool);
      poolOffset = 0;
    }
    const id = pool.toString('hex', poolOffset, poolOffset + bytes);
    poolOffset += bytes;
    if (id !== zero) return id;
  }
}

/** A new span id: 8 random bytes, hex. */
export function newSpanId(): string {
  return randomId(8, ZERO_SPAN);
}

/** The root of a new trace: 16 random bytes of trace id, a new span id, sampled. */
export function newTraceContext(): TraceContext {
  return { traceId: randomId(16, ZERO_TRACE), spanId: newSpanId(), flags: SAMPLED };
}

/** A child of `parent`: the same trace and flags, a new span id. */
export function childTraceContext(parent: TraceContext): TraceContext {
  return { traceId: parent.traceId, spanId: newSpanId(), flags: parent.flags };
}
