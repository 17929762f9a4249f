import { readFileSync } from 'node:fs';
import { ToolClass, valuesOf } from '@agent-saga/core';
import { z } from 'zod';
import { McpUpstreamMappingError } from './mcp-upstream-errors.js';

const HARNESS_NAME = /^[a-z][a-z0-9_]*$/;
/** Why 1,024: core's limit on a tool's description (OpenAI's function-calling limit). */
const MAX_DESCRIPTION = 1024;
const dottedPath = z.string().regex(/^[^.\s]+(\.[^.\s]+)*$/, 'must be a dotted path (`a.b.c`)');

/** One upstream MCP server, reached over Streamable HTTP. */
const upstreamSchema = z.strictObject({
  /** The MCP endpoint (`http://127.0.0.1:9400/mcp`). */
  url: z.url(),
  /** Sent with every HTTP request (an `authorization` header). */
  headers: z.record(z.string(), z.string()).optional(),
  /**
   * The upstream reads `_meta["agent-saga/idempotencyKey"]` on `tools/call` (dedupes on it and stores it):
   * every forward call then carries the key, run and step in `_meta`. Default false.
   */
  acceptsKeyInMeta: z.boolean().default(false),
});

/**
 * How a mapped tool's effect is found by key: `tool` (on the same upstream) is called with
 * `{ [keyArg]: key }`. Its value (structured content, else JSON text) read at `resultPath` (when given) is
 * "found" when it is a non-empty object or an array of exactly one; empty, null or `[]` is "absent"; an
 * array of more is a duplicate-effect incident.
 */
const lookupSchema = z.strictObject({
  tool: z.string().min(1),
  keyArg: z.string().min(1),
  /** How long the upstream may take to show a new effect to `tool`. Default 0. */
  lagMs: z.number().int().nonnegative().default(0),
  /** A dotted path into the lookup's value where the matches are (`tickets`). Default: the value itself. */
  resultPath: dottedPath.optional(),
  /** The external ref within one match. Default: the tool's own `externalRef`. */
  externalRef: dottedPath.optional(),
});

/**
 * The compensation, stored before the forward call: the harness tool `tool` (a mapped one) with `args`,
 * where a string value `"$externalRef"` becomes core's `ref(key)` (the forward step's external id, filled
 * in when the compensation runs), `"$args.<path>"` copies the forward argument at that path (left out when
 * the forward call had none), and anything else is literal.
 */
const compensationSchema = z.strictObject({
  tool: z.string().regex(HARNESS_NAME, 'must match [a-z][a-z0-9_]*'),
  args: z.record(z.string(), z.json()).default({}),
});

/** One harness tool backed by one upstream tool. `class` is required: annotations never decide it. */
const mappedToolSchema = z.strictObject({
  upstream: z.string().min(1),
  tool: z.string().min(1),
  class: z.enum(valuesOf(ToolClass) as [ToolClass, ...ToolClass[]]),
  version: z.number().int().positive(),
  /** For the model. Default: the upstream's description. */
  description: z.string().max(MAX_DESCRIPTION).optional(),
  identity: z.array(dottedPath).optional(),
  repeatable: z.boolean().optional(),
  deletes: z.boolean().optional(),
  secret: z.array(dottedPath).optional(),
  /**
   * Argument and result paths of personal data (a customer's email, name, address, free text about them),
   * as core's `personal` and `personalResult`: shown to operators, `[PERSONAL]` to agent tokens, never in
   * logs.
   */
  personal: z.array(dottedPath).optional(),
  personalResult: z.array(dottedPath).optional(),
  timeoutMs: z.number().int().positive().optional(),
  /**
   * As core's `commitHorizonMs`: the longest after a call is sent that the upstream may still make its
   * effect (a call it holds past `timeoutMs` and completes afterwards). A "not found" is believed only
   * after this plus `lookup.lagMs`. Default: `timeoutMs`. Declare more for an upstream that does not dedupe
   * a re-sent call by its key and may finish work after the client gave up.
   */
  commitHorizonMs: z.number().int().nonnegative().optional(),
  /**
   * An argument of the upstream tool that takes the key (for an upstream that stores it as a field). The
   * harness fills it in and leaves it out of the schema the model sees.
   */
  keyArg: z.string().min(1).optional(),
  /** Required for every tool but a pure one. */
  lookup: lookupSchema.optional(),
  /** A dotted path into the result (`id`) that is the effect's external id. Default: none (null). */
  externalRef: dottedPath.optional(),
  /** Required for a compensatable or reversible tool. */
  compensation: compensationSchema.optional(),
});

/**
 * The mapping file of upstream MCP servers: which upstream tools become harness tools, under which names,
 * with which class, lookup and compensation. JSON:
 *
 * ```json
 * { "upstreams": { "desk": { "url": "http://127.0.0.1:9400/mcp", "acceptsKeyInMeta": true } },
 *   "tools": { "desk_open_ticket": { "upstream": "desk", "tool": "open_ticket", "class": "compensatable",
 *       "version": 1, "identity": ["subject"], "externalRef": "id",
 *       "lookup": { "tool": "find_ticket_by_key", "keyArg": "key", "resultPath": "tickets" },
 *       "compensation": { "tool": "desk_close_ticket", "args": { "ticketId": "$externalRef" } } } } }
 * ```
 *
 * Rules beyond the fields' own: a harness name matches `[a-z][a-z0-9_]*`; `upstream` names an upstream of
 * the file; a tool that is not pure names its `lookup` and sends its key (the upstream `acceptsKeyInMeta`
 * or the tool has a `keyArg`: an effect made without the key could never be found by it, so an UNKNOWN
 * step would be believed absent and sent again); a compensatable or reversible tool has a `compensation`
 * whose `tool` is mapped in the same file.
 */
export const mcpUpstreamMappingSchema = z
  .strictObject({
    upstreams: z.record(z.string().regex(HARNESS_NAME, 'must match [a-z][a-z0-9_]*'), upstreamSchema),
    tools: z.record(z.string(), mappedToolSchema),
  })
  .superRefine((mapping, ctx) => {
    for (const [name, tool] of Object.entries(mapping.tools)) {
      const at = (...path: string[]) => ['tools', name, ...path];
      if (!HARNESS_NAME.test(name))
        ctx.addIssue({ code: 'custom', path: ['tools', name], message: 'must match [a-z][a-z0-9_]*' });
      const upstream = mapping.upstreams[tool.upstream];
      if (upstream === undefined)
        ctx.addIssue({ code: 'custom', path: at('upstream'), message: `no upstream ${tool.upstream}` });
      if (tool.class === ToolClass.PURE) continue;
      if (tool.lookup === undefined)
        ctx.addIssue({ code: 'custom', path: at('lookup'), message: 'Required (a side-effecting tool)' });
      if (upstream !== undefined && !upstream.acceptsKeyInMeta && tool.keyArg === undefined)
        ctx.addIssue({
          code: 'custom',
          path: at('keyArg'),
          message: `Required: upstream ${tool.upstream} does not accept the key in _meta`,
        });
      if (tool.class === ToolClass.IRREVERSIBLE) continue;
      if (tool.compensation === undefined)
        ctx.addIssue({
          code: 'custom',
          path: at('compensation'),
          message: `Required (a ${tool.class} tool)`,
        });
      else if (mapping.tools[tool.compensation.tool] === undefined)
        ctx.addIssue({
          code: 'custom',
          path: at('compensation', 'tool'),
          message: `${tool.compensation.tool} is not a mapped tool`,
        });
    }
  });

/** A parsed mapping file, frozen, with the file it came from (named in every error about it). */
export type McpUpstreamMapping = Readonly<z.infer<typeof mcpUpstreamMappingSchema>> & {
  readonly source: string;
};
/** One mapped tool of {@link McpUpstreamMapping}. */
export type McpMappedTool = McpUpstreamMapping['tools'][string];
/** One upstream of {@link McpUpstreamMapping}. */
export type McpUpstreamEntry = McpUpstreamMapping['upstreams'][string];

/** Parses an already-read mapping (`source` names it in errors). Throws {@link McpUpstreamMappingError}. */
export function parseMcpUpstreamMapping(json: unknown, source: string): McpUpstreamMapping {
  const parsed = mcpUpstreamMappingSchema.safeParse(json, { reportInput: true });
  if (!parsed.success)
    throw new McpUpstreamMappingError(
      source,
      parsed.error.issues.map((i) => ({
        field: i.path.map(String).join('.'),
        // A missing field reads `Required`, not zod's "expected string, received undefined".
        message: i.code !== 'custom' && i.input === undefined ? 'Required' : i.message,
      })),
    );
  return Object.freeze({ ...parsed.data, source });
}

/** Reads and parses the mapping file at `path`, once, at start. Throws {@link McpUpstreamMappingError}. */
export function loadMcpUpstreamMapping(path: string): McpUpstreamMapping {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new McpUpstreamMappingError(path, [
      { field: '', message: `cannot be read as JSON (${err instanceof Error ? err.message : String(err)})` },
    ]);
  }
  return parseMcpUpstreamMapping(json, path);
}
