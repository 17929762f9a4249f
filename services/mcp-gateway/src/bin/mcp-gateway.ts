/**
 * Entry point of an MCP gateway process: `pnpm mcp-gateway` (streamable HTTP at `/mcp` on MCP_PORT) or
 * `pnpm mcp-gateway --stdio` (one local client on stdin/stdout, token SAGA_TOKEN). The gateway is a client
 * of the dispatcher's API (SAGA_API_URL): it holds no database pool, so any number may run, each with its
 * own sessions. With SAGA_MCP_UPSTREAMS set, the upstream MCP servers' tools are checked before it listens,
 * and an unmapped tool with effects stops it (exit 1). SIGTERM drains: no new requests, the calls in
 * flight are answered (bounded by MCP_WAIT_MS), the sessions close, the process exits 0.
 */
import { ServiceUnavailableError, UnauthorizedError } from '@agent-saga/client';
import { drainOnSignal, exitOnStartFailure, type Logger } from '@agent-saga/core';
import { loadGatewayConfig, type GatewayConfig, type GatewayMode } from '../config.js';
import { createGatewayLogger } from '../gateway-logger.js';
import { serveHttp } from '../http/serve-http.js';
import { createGatewayRuns } from '../runs/gateway-runs.js';
import type { GatewayServerDeps } from '../server/create-gateway-server.js';
import { serveStdio } from '../stdio/serve-stdio.js';
import { checkUpstreams } from '../upstream/check-upstreams.js';

/** Slack on top of MCP_WAIT_MS for a call in flight to be answered during a drain. */
const DRAIN_MARGIN_MS = 2_000;

const mode: GatewayMode = process.argv.includes('--stdio') ? 'stdio' : 'http';
let logger: Logger | undefined;
try {
  const config = loadGatewayConfig(mode);
  logger = createGatewayLogger(config.LOG_LEVEL, mode);
  if (config.SAGA_MCP_UPSTREAMS !== undefined) await refuseBadUpstreams(config.SAGA_MCP_UPSTREAMS, logger);
  const deps: GatewayServerDeps = {
    runs: createGatewayRuns({ apiUrl: config.SAGA_API_URL }),
    waitMs: config.MCP_WAIT_MS,
    logger,
  };
  if (mode === 'stdio') await startStdio(config, deps);
  else await startHttp(config, deps);
} catch (err) {
  exitOnStartFailure(logger, err);
}

async function startHttp(config: Readonly<GatewayConfig>, deps: GatewayServerDeps): Promise<void> {
  const gateway = await serveHttp(deps, {
    host: config.MCP_HOST,
    port: config.MCP_PORT,
    drainMs: config.MCP_WAIT_MS + DRAIN_MARGIN_MS,
  });
  deps.logger.info({ host: config.MCP_HOST, port: gateway.port, api: config.SAGA_API_URL }, 'started');
  drainOnSignal({ logger: deps.logger, drain: () => gateway.close() });
}

async function startStdio(config: Readonly<GatewayConfig>, deps: GatewayServerDeps): Promise<void> {
  const token = config.SAGA_TOKEN!; // required in stdio mode by loadGatewayConfig
  await checkToken(deps, token);
  const gateway = await serveStdio(deps, token);
  deps.logger.info({ runId: gateway.runId, api: config.SAGA_API_URL }, 'started on stdio');
  const drain = async () => {
    await Promise.race([deps.runs.settled(), sleep(config.MCP_WAIT_MS + DRAIN_MARGIN_MS)]);
    await gateway.close();
  };
  drainOnSignal({ logger: deps.logger, drain });
  // The client closing stdin ends the session and the process.
  void gateway.closed.then(drain).then(
    () => process.exit(0),
    () => process.exit(1),
  );
}

/**
 * A stdio session has one token for its life: a refused one stops the process at once, naming the
 * variable. An unreachable harness does not: the client's calls answer UNAVAILABLE until it is back.
 */
async function checkToken(deps: GatewayServerDeps, token: string): Promise<void> {
  try {
    await deps.runs.clientFor(token).listTools();
  } catch (err) {
    if (err instanceof UnauthorizedError)
      throw new Error('SAGA_TOKEN: unknown or revoked token', { cause: err });
    if (!(err instanceof ServiceUnavailableError)) throw err;
    deps.logger.warn({ err }, 'agent-saga is unreachable; calls answer UNAVAILABLE until it is back');
  }
}

/** The upstream check, or exit 1 with its message (logged at error level and printed). */
async function refuseBadUpstreams(path: string, log: Logger): Promise<void> {
  try {
    const { exposed, hidden } = await checkUpstreams(path);
    log.info({ exposed, hidden }, 'upstream MCP tools checked');
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log.error({ err }, message);
    process.stderr.write(`mcp-gateway: ${message}\n`);
    process.exit(1);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
