// The public surface of @agent-saga/mcp-gateway: what tests and embedders use. Named exports only.
export { gatewayConfigSchema, loadGatewayConfig, type GatewayConfig, type GatewayMode } from './config.js';
export {
  createGatewayServer,
  GATEWAY_INFO,
  type GatewayServerDeps,
  type GatewaySession,
} from './server/create-gateway-server.js';
export { createGatewayRuns, type GatewayRuns, type RunCall } from './runs/gateway-runs.js';
export { createInFlightCalls, type InFlightCalls } from './calls/in-flight-calls.js';
export { callToolResult } from './calls/call-result.js';
export { describeTool } from './tools/describe-tools.js';
export { serveHttp, MCP_PATH, type HttpGateway, type HttpGatewayOptions } from './http/serve-http.js';
export { serveStdio, type StdioGateway } from './stdio/serve-stdio.js';
export { checkUpstreams } from './upstream/check-upstreams.js';
