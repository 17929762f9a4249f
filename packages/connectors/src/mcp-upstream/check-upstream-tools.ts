import type { McpUpstreamMapping } from './mcp-upstream-mapping.js';
import { UnmappedUpstreamToolError } from './mcp-upstream-errors.js';
import { openUpstreams } from './open-upstreams.js';

/** An upstream tool the gateway does not expose, and why. */
export interface HiddenUpstreamTool {
  readonly upstream: string;
  readonly tool: string;
  readonly reason: string;
}

/** What a gateway may expose of its upstreams. */
export interface UpstreamToolsCheck {
  /** Harness names of the mapped tools, in the file's order. */
  readonly exposed: readonly string[];
  readonly hidden: readonly HiddenUpstreamTool[];
}

/**
 * The gateway's start check: connects to each upstream, lists its tools, and decides for each one:
 * - mapped (some entry's `tool`): exposed under its harness name;
 * - named only as a lookup: hidden (the mapping classes it as a read used by the harness);
 * - unmapped, annotated `readOnlyHint: true`: hidden (a hint may hide a tool, never expose one);
 * - unmapped otherwise: {@link UnmappedUpstreamToolError} for the first such tool, naming it.
 * Throws what {@link openUpstreams} throws for an unreachable upstream or a missing mapped tool. Closes its
 * connections before returning.
 */
export async function checkUpstreamTools(mapping: McpUpstreamMapping): Promise<UpstreamToolsCheck> {
  const upstreams = await openUpstreams(mapping);
  try {
    const entries = Object.entries(mapping.tools);
    const hidden: HiddenUpstreamTool[] = [];
    for (const [upstream, { tools }] of upstreams) {
      for (const tool of tools.values()) {
        const on = entries.filter(([, m]) => m.upstream === upstream);
        if (on.some(([, m]) => m.tool === tool.name)) continue;
        const lookupOf = on.filter(([, m]) => m.lookup?.tool === tool.name).map(([n]) => n);
        if (lookupOf.length > 0)
          hidden.push({ upstream, tool: tool.name, reason: `lookup of ${lookupOf.join(', ')}` });
        else if (tool.annotations?.readOnlyHint === true)
          hidden.push({ upstream, tool: tool.name, reason: 'unmapped (annotated read-only)' });
        else throw new UnmappedUpstreamToolError(upstream, tool.name, mapping.source);
      }
    }
    return { exposed: entries.map(([name]) => name), hidden };
  } finally {
    await Promise.all([...upstreams.values()].map((u) => u.connection.close()));
  }
}
