import { trace } from '@opentelemetry/api';
import { loadTracingConfig, type TracingConfig } from './tracing-config.js';

/** A started exporter: flushes what it holds and stops. */
export interface Tracing {
  /** False when no endpoint was configured: nothing was started. */
  readonly exporting: boolean;
  shutdown(): Promise<void>;
}

const NOT_EXPORTING: Tracing = { exporting: false, shutdown: () => Promise.resolve() };

/**
 * The one call every role's bin makes before `runRole`: with OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, registers a global tracer provider that batches spans to the
 * collector over OTLP/HTTP, so `startTraceSpan` records real spans; without it, a no-op (no SDK is even
 * loaded: the modules are imported only here, when needed).
 *
 * On SIGTERM/SIGINT the provider is shut down (its batch flushed) beside the role's own drain; spans that
 * end after the flush are not exported (best effort, bounded by the exporter's own timeout).
 *
 * @param role the role's name (`api`, `executor`, …): the default `service.name` is `agent-saga-<role>`.
 */
export async function startTracing(
  role: string,
  env: Record<string, string | undefined> = process.env,
): Promise<Tracing> {
  const config = loadTracingConfig(env);
  const url = tracesUrl(config);
  if (!url) return NOT_EXPORTING;
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.OTEL_SERVICE_NAME ?? `agent-saga-${role}` }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  trace.setGlobalTracerProvider(provider);
  let stopped: Promise<void> | undefined;
  const shutdown = (): Promise<void> => (stopped ??= provider.shutdown().catch(() => undefined));
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
  return { exporting: true, shutdown };
}

/** Where spans go: the traces endpoint as given, else `<endpoint>/v1/traces`; undefined: nowhere. */
function tracesUrl(c: TracingConfig): string | undefined {
  if (c.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return c.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (!c.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  return `${c.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
}
