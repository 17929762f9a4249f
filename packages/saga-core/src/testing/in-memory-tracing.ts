import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/** A tracer provider registered globally for one test file, keeping every ended span in memory. */
export interface InMemoryTracing {
  /** The spans ended so far, in the order they ended. */
  spans(): readonly ReadableSpan[];
  reset(): void;
  /** Unregisters the provider (later spans are non-recording again). */
  close(): Promise<void>;
}

/**
 * Installs an in-memory exporter behind a `BasicTracerProvider` with a `SimpleSpanProcessor` (each span
 * exported as it ends), registered as the process's global provider, as `startTracing` registers the OTLP
 * one: what `startTraceSpan` records in this process can then be read back. For in-process tests only.
 */
export function installInMemoryTracing(): InMemoryTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.disable();
  trace.setGlobalTracerProvider(provider);
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    async close() {
      trace.disable();
      await provider.shutdown();
    },
  };
}
