import {
  context as otelContext,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import { childTraceContext, formatTraceparent, newTraceContext, type TraceContext } from './trace-context.js';

/** The name spans are recorded under (the instrumentation scope). */
const TRACER_NAME = 'agent-saga';

/** One span of a step's trace: its context (what is stored and sent on), and how to end it. */
export interface TraceSpan {
  readonly context: TraceContext;
  /** `context` as a `traceparent` header, for the vendor request made inside this span. */
  readonly traceparent: string;
  /** Ends the span; an error marks it failed (its message only: arguments and secrets never go in). */
  end(error?: unknown): void;
}

/** What a span is for: an incoming request (`server`), a call out (`client`), or work inside (`internal`). */
export type TraceSpanKind = 'server' | 'client' | 'internal';

const KINDS = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL } as const;

/**
 * Starts a span named `name` as a child of `parent` (null: the root of a new trace).
 *
 * With a tracer provider registered (`startTracing` with OTEL_EXPORTER_OTLP_ENDPOINT set, or a test's
 * in-memory one), the span is a real OpenTelemetry span and `context` holds its ids, so what the saga log
 * stores is what the exporter sends. Without one, OpenTelemetry's API answers with a non-recording span; we
 * then make the ids ourselves (a few random bytes, no SDK) and `end` does nothing: the trace is still
 * stored and propagated, nothing is exported.
 *
 * `attributes` must hold no personal data or secrets (ids, tool names, statuses only): they are exported.
 */
export function startTraceSpan(
  name: string,
  parent: TraceContext | null,
  kind: TraceSpanKind = 'internal',
  attributes?: Attributes,
): TraceSpan {
  if (!tracerRegistered()) return untracedSpan(parent);
  const parentCtx = parent
    ? trace.setSpanContext(otelContext.active(), {
        traceId: parent.traceId,
        spanId: parent.spanId,
        traceFlags: parent.flags & TraceFlags.SAMPLED,
        isRemote: true,
      })
    : otelContext.active();
  const span = trace
    .getTracer(TRACER_NAME)
    .startSpan(name, { kind: KINDS[kind], ...(attributes ? { attributes } : {}) }, parentCtx);
  if (!span.isRecording()) return untracedSpan(parent);
  const sc = span.spanContext();
  const context: TraceContext = { traceId: sc.traceId, spanId: sc.spanId, flags: sc.traceFlags };
  return { context, traceparent: formatTraceparent(context), end: (error) => endSpan(span, error) };
}

/** A span nothing records: the ids made here (a few random bytes), `end` a no-op. */
function untracedSpan(parent: TraceContext | null): TraceSpan {
  const context = parent ? childTraceContext(parent) : newTraceContext();
  return { context, traceparent: formatTraceparent(context), end: NO_END };
}

const NO_END = (): void => undefined;

/** What OpenTelemetry's API delegates to while no tracer provider is registered. */
const NO_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Whether a tracer provider is registered with OpenTelemetry's API (ours from `startTracing`, a test's, or
 * the application's own). Without one every span is non-recording, so `startTraceSpan` skips the API's
 * context, tracer and span objects (two spans per call on the hot path) and makes the ids itself, as it
 * would after asking. Asked on every span: a provider registered later is used from then on.
 */
function tracerRegistered(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NO_PROVIDER;
}

function endSpan(span: Span, error: unknown): void {
  if (error !== undefined) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.name : 'error',
    });
  }
  span.end();
}
