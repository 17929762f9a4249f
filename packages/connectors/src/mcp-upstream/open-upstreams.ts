import type { McpUpstreamMapping } from './mcp-upstream-mapping.js';
import { McpUpstreamUnavailableError } from './mcp-upstream-errors.js';
import { UpstreamConnection, type McpTool } from './upstream-connection.js';

/** One upstream, connected, with the tools it listed at start. */
export interface OpenUpstream {
  readonly connection: UpstreamConnection;
  readonly tools: ReadonlyMap<string, McpTool>;
}

/**
 * Connects to every upstream of the mapping, lists its tools, and checks that every tool the mapping
 * names on it (forward and lookup) is listed. The start check of both the tool module and the gateway:
 * an unreachable upstream or a missing tool stops the start, naming the upstream, the tool and the
 * mapping field. On failure every connection opened is closed.
 */
export async function openUpstreams(mapping: McpUpstreamMapping): Promise<Map<string, OpenUpstream>> {
  const open = new Map<string, OpenUpstream>();
  try {
    for (const [name, entry] of Object.entries(mapping.upstreams)) {
      const connection = new UpstreamConnection(name, entry);
      open.set(name, { connection, tools: new Map() });
      const listed = await connection.listTools();
      open.set(name, { connection, tools: new Map(listed.map((t) => [t.name, t])) });
    }
    for (const [name, mapped] of Object.entries(mapping.tools)) {
      const upstream = open.get(mapped.upstream);
      const need = (tool: string, field: string) => {
        if (!upstream?.tools.has(tool))
          throw new McpUpstreamUnavailableError(
            mapped.upstream,
            `has no tool ${tool} (tools.${name}.${field} in ${mapping.source})`,
          );
      };
      need(mapped.tool, 'tool');
      if (mapped.lookup) need(mapped.lookup.tool, 'lookup.tool');
    }
    return open;
  } catch (err) {
    await Promise.all([...open.values()].map((u) => u.connection.close()));
    throw err;
  }
}
