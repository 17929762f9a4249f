import { createLogger, type Logger } from '@agent-saga/core';
import type { GatewayMode } from './config.js';

/**
 * The gateway's logger: core's, on stdout, in HTTP mode. In stdio mode stdout is the MCP channel, where a
 * log line would be read as a malformed message, so the same logger writes to stderr instead.
 */
export function createGatewayLogger(level: string, mode: GatewayMode): Logger {
  return createLogger({ level, name: 'saga-mcp-gateway', ...(mode === 'stdio' ? { destination: 2 } : {}) });
}
