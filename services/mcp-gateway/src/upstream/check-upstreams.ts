import type { UpstreamToolsCheck } from '@agent-saga/connectors';

/**
 * The start-up check of the upstream MCP servers the gateway fronts (SAGA_MCP_UPSTREAMS): the mapping
 * file is read and every upstream tool checked by `@agent-saga/connectors` (`loadMcpUpstreamMapping`,
 * `checkUpstreamTools`), the one home of those rules; the gateway only refuses to start when they throw.
 * `UnmappedUpstreamToolError` names an upstream tool with effects and no mapping, which the gateway would
 * otherwise have no honest way to expose: it would run outside the log. Mapped upstream tools need nothing
 * more here: the dispatcher's tool module registers them, so they are listed and called like any other.
 *
 * The connectors are imported only when the variable is set: a gateway without upstreams never loads
 * the vendor SDKs they bring.
 */
export async function checkUpstreams(path: string): Promise<UpstreamToolsCheck> {
  const { loadMcpUpstreamMapping, checkUpstreamTools } = await import('@agent-saga/connectors');
  return checkUpstreamTools(loadMcpUpstreamMapping(path));
}
