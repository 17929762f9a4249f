import type { AnyTool } from '@agent-saga/core';
import { buildUpstreamTool } from './build-upstream-tool.js';
import type { McpUpstreamMapping } from './mcp-upstream-mapping.js';
import { openUpstreams } from './open-upstreams.js';

export interface McpUpstreamToolsOptions {
  /** When it fires, every upstream connection is closed (a test's end, a process's shutdown). */
  readonly signal?: AbortSignal;
}

/**
 * The harness tools of a mapping: connects to each upstream (one MCP client per upstream, shared by its
 * tools), checks that every mapped tool and lookup is listed, and builds one tool per mapped entry, in the
 * file's order. Throws at start, naming it, for an unreachable upstream or a missing tool. For a tool
 * module: `export default [...tools, ...(await createMcpUpstreamTools(loadMcpUpstreamMapping(path)))]`.
 */
export async function createMcpUpstreamTools(
  mapping: McpUpstreamMapping,
  options: McpUpstreamToolsOptions = {},
): Promise<AnyTool[]> {
  const upstreams = await openUpstreams(mapping);
  options.signal?.addEventListener(
    'abort',
    () => void Promise.all([...upstreams.values()].map((u) => u.connection.close())),
    { once: true },
  );
  return Object.entries(mapping.tools).map(([name, mapped]) => {
    const upstream = upstreams.get(mapped.upstream);
    const upstreamTool = upstream?.tools.get(mapped.tool);
    // openUpstreams has checked both; this only narrows the types.
    if (!upstream || !upstreamTool) throw new Error(`unreachable: ${mapped.upstream}.${mapped.tool}`);
    return buildUpstreamTool({ name, mapped, upstreamTool, connection: upstream.connection });
  });
}
