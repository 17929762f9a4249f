import { z } from 'zod';
import type { McpTool } from './upstream-connection.js';

/** The harness's argument schema for one upstream tool, and a note when it could not be kept exactly. */
export interface UpstreamArgsSchema {
  readonly schema: z.ZodType<Record<string, unknown>>;
  /** Set when the upstream's schema could not be converted: the arguments are then only checked to be an object. */
  readonly note?: string;
}

/**
 * Converts an upstream tool's JSON Schema `inputSchema` into zod (`z.fromJSONSchema`), so that the intake
 * refuses bad arguments before anything is written, naming the field, and `GET /v1/tools` shows the same
 * schema the upstream declared. `keyArg`, filled in by the harness, is taken out first: the model never
 * writes the key. When the conversion fails (a keyword zod cannot express), the schema falls back to "any
 * object" and the upstream validates the arguments itself: its refusal is a JSON-RPC error, nothing done.
 */
export function inputSchemaToZod(inputSchema: McpTool['inputSchema'], keyArg?: string): UpstreamArgsSchema {
  const json: Record<string, unknown> = { ...inputSchema };
  delete json.$schema;
  if (keyArg !== undefined) {
    const properties = { ...inputSchema.properties };
    delete properties[keyArg];
    json.properties = properties;
    if (inputSchema.required) json.required = inputSchema.required.filter((r) => r !== keyArg);
  }
  try {
    const schema = z.fromJSONSchema(json);
    return { schema: schema as z.ZodType<Record<string, unknown>> };
  } catch (err) {
    return {
      schema: z.record(z.string(), z.unknown()),
      note: `the upstream's input schema could not be converted (${err instanceof Error ? err.message : String(err)}); the upstream checks the arguments`,
    };
  }
}
