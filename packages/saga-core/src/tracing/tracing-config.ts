import { z } from 'zod';
import { parseConfig } from '../process/config.js';

/**
 * The OpenTelemetry settings of every role, parsed once at start by {@link startTracing}. The names are
 * OpenTelemetry's own (https://opentelemetry.io/docs/specs/otel/protocol/exporter/), so a collector set up
 * for other services reads the same environment.
 */
export const tracingConfigSchema = z.object({
  /**
   * Base URL of an OTLP/HTTP collector (`http://collector:4318`); spans go to `<url>/v1/traces`. Unset: no
   * SDK is started and nothing is exported (trace ids are still stored and propagated).
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  /** The exact traces URL, when it is not `<endpoint>/v1/traces`. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  /** `service.name` of the exported spans; default `agent-saga-<role>`. */
  OTEL_SERVICE_NAME: z.string().min(1).max(100).optional(),
});
export type TracingConfig = z.infer<typeof tracingConfigSchema>;

/** Parses the tracing settings from `env`; a bad value fails naming its variable. */
export function loadTracingConfig(env: Record<string, string | undefined>): Readonly<TracingConfig> {
  return parseConfig(tracingConfigSchema, env);
}
