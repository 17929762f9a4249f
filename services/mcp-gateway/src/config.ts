import { z } from 'zod';
import { MAX_WAIT_MS } from '@agent-saga/client';
import { baseConfigSchema, ConfigError, parseConfig } from '@agent-saga/core';

/**
 * Configuration of an MCP gateway process, parsed once at start. The gateway is a client of the
 * dispatcher's HTTP API only: it holds no Postgres pool and no Redis connection, so it takes none of the
 * base settings but the log level.
 */
export const gatewayConfigSchema = baseConfigSchema.pick({ LOG_LEVEL: true }).extend({
  /** The dispatcher's API (its `PORT` defaults to 8080). */
  SAGA_API_URL: z.string().url().default('http://127.0.0.1:8080'),
  /** Port of the streamable HTTP endpoint (`/mcp`). 8081: next to the dispatcher's 8080. */
  MCP_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  /** Interface the HTTP endpoint binds to: loopback unless the operator opens it on purpose. */
  MCP_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * How long one `tools/call` waits for its step to settle (the dispatcher's `waitMs`) before it answers
   * INTENDED. Why 10 s: the dispatcher's own default, and well inside an MCP client's request timeout
   * (60 s in the official SDK), so the client never times out a call the harness is still waiting on.
   */
  MCP_WAIT_MS: z.coerce.number().int().min(0).max(MAX_WAIT_MS).default(10_000),
  /** The agent token of `--stdio` mode (HTTP clients send their own as a bearer token). */
  SAGA_TOKEN: z.string().min(1).optional(),
  /** Path of the upstream MCP servers' mapping file; checked at start when set. */
  SAGA_MCP_UPSTREAMS: z.string().min(1).optional(),
});
export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;

/** How the gateway speaks MCP: streamable HTTP for remote clients, stdio for a local one. */
export type GatewayMode = 'http' | 'stdio';

/** Parses the environment once; stdio mode needs SAGA_TOKEN (there is no request to carry one). */
export function loadGatewayConfig(
  mode: GatewayMode,
  env: Record<string, string | undefined> = process.env,
): Readonly<GatewayConfig> {
  const config = parseConfig(gatewayConfigSchema, env);
  if (mode === 'stdio' && config.SAGA_TOKEN === undefined)
    throw new ConfigError('invalid configuration:\n  SAGA_TOKEN: required with --stdio (an agent token)');
  return config;
}
