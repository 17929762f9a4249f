import { describe, expect, it } from 'vitest';
import {
  childTraceContext,
  ConfigError,
  formatTraceparent,
  newSpanId,
  newTraceContext,
  parseTraceparent,
  startTraceSpan,
  startTracing,
  storedTrace,
} from '../src/index.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('parseTraceparent', () => {
  it('reads a version-00 header', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, spanId: SPAN, flags: 1 });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toEqual({ traceId: TRACE, spanId: SPAN, flags: 0 });
  });

  it.each([
    ['absent', undefined],
    ['not a string', ['00-…']],
    ['empty', ''],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['another version', `01-${TRACE}-${SPAN}-01`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['trailing fields', `00-${TRACE}-${SPAN}-01-extra`],
    ['surrounding space', ` 00-${TRACE}-${SPAN}-01`],
    ['non-hex', `00-${TRACE.slice(0, 31)}g-${SPAN}-01`],
  ])('refuses %s (null: a new trace, never an error)', (_what, header) => {
    expect(parseTraceparent(header)).toBeNull();
  });

  it('round-trips through formatTraceparent', () => {
    const header = `00-${TRACE}-${SPAN}-01`;
    expect(formatTraceparent(parseTraceparent(header)!)).toBe(header);
  });
});

describe('new trace contexts', () => {
  it('are 16 and 8 random bytes of hex, sampled, and parse back', () => {
    const a = newTraceContext();
    const b = newTraceContext();
    expect(a.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(a.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(a.flags).toBe(1);
    expect(a.traceId).not.toBe(b.traceId);
    expect(newSpanId()).toMatch(/^[0-9a-f]{16}$/);
    expect(parseTraceparent(formatTraceparent(a))).toEqual(a);
  });

  it('a child keeps the trace and flags, with a new span', () => {
    const parent = { traceId: TRACE, spanId: SPAN, flags: 1 };
    const child = childTraceContext(parent);
    expect(child.traceId).toBe(TRACE);
    expect(child.spanId).not.toBe(SPAN);
  });

  it('the stored form is the same context, in 16 + 8 bytes', () => {
    const row = { trace_id: Buffer.from(TRACE, 'hex'), span_id: Buffer.from(SPAN, 'hex') };
    expect(row.trace_id.length + row.span_id.length).toBe(24);
    expect(storedTrace(row)).toEqual({ traceId: TRACE, spanId: SPAN, flags: 1 });
    expect(storedTrace({ trace_id: null, span_id: null })).toBeNull();
  });
});

describe('without a tracer provider', () => {
  it('a span still has ids of its own: a child of its parent, or a new trace', () => {
    const child = startTraceSpan('saga.test', { traceId: TRACE, spanId: SPAN, flags: 1 });
    expect(child.context.traceId).toBe(TRACE);
    expect(child.context.spanId).not.toBe(SPAN);
    expect(child.traceparent).toBe(`00-${TRACE}-${child.context.spanId}-01`);
    child.end();
    const root = startTraceSpan('saga.test', null);
    expect(root.context.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root.context.traceId).not.toBe(TRACE);
  });

  it('startTracing is a no-op without an endpoint, and refuses a bad one naming it', async () => {
    expect((await startTracing('test', {})).exporting).toBe(false);
    await expect(startTracing('test', { OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).rejects.toThrow(
      ConfigError,
    );
    await expect(startTracing('test', { OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).rejects.toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
  });
});
