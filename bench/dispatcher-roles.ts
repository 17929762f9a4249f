/**
 * The three dispatcher roles (api, relay, executor), each its own process started as in production (from
 * dist, with `ROLE_NODE_FLAGS`), on the bench's schema, queue prefix and no-op tool module (compiled
 * too: plain Node loads no TypeScript), at LOG_LEVEL=warn so logging costs what it would in a quiet
 * deployment.
 */
import { resolve } from 'node:path';
import { REPO_ROOT, type BenchConfig } from './bench-config.js';
import { startRole, waitUntil, type NodeChild } from './child-process.js';
import { freePort } from '@agent-saga/core';

/** The tool module every role loads: bench/noop-tools.ts as `pnpm build` compiles it. */
export const NOOP_TOOLS = resolve(REPO_ROOT, 'bench/dist/noop-tools.js');
/** A cold start of three role processes on two cores takes a few seconds; this is generous. */
const READY_TIMEOUT_MS = 60_000;
/** Longer than an executor needs to finish no-op calls and close its pools. */
const STOP_GRACE_MS = 15_000;

export interface DispatcherRoles {
  readonly baseUrl: string;
  readonly children: readonly NodeChild[];
  /** Fails with the role's output if any role has exited. */
  assertRunning(): void;
  /** SIGTERM to every role; resolves with how each ended (a drained role exits 0). */
  stop(): Promise<{ role: string; code: number | null; signal: string | null; killed: boolean }[]>;
}

/** What every role the bench starts shares: the bench's schema, queue prefix and no-op tools, quiet logs. */
export function benchRoleEnv(
  config: BenchConfig,
  target: { readonly schema: string; readonly queuePrefix: string },
): Record<string, string> {
  return {
    DATABASE_URL: config.DATABASE_URL,
    REDIS_URL: config.REDIS_URL,
    SAGA_DB_SCHEMA: target.schema,
    SAGA_QUEUE_PREFIX: target.queuePrefix,
    SAGA_TOOLS: NOOP_TOOLS,
    LOG_LEVEL: 'warn',
    DB_POOL_SIZE: String(config.DB_POOL_SIZE),
  };
}

/** `--cpu-prof` into `<BENCH_CPU_PROFILE_DIR>/<role>/` when profiles are asked for, else nothing. */
export function cpuProfileArgs(config: BenchConfig, role: string): string[] {
  return config.BENCH_CPU_PROFILE_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${resolve(config.BENCH_CPU_PROFILE_DIR, role)}`]
    : [];
}

/** Starts api, relay and executor and waits until the API is ready and both workers serve /metrics. */
export async function startDispatcherRoles(
  config: BenchConfig,
  target: { readonly schema: string; readonly queuePrefix: string },
): Promise<DispatcherRoles> {
  const [apiPort, relayMetrics, executorMetrics] = await Promise.all([freePort(), freePort(), freePort()]);
  const env = {
    ...benchRoleEnv(config, target),
    // The bench drives one token past the default per-token limit (1,000 requests/s) on purpose.
    SAGA_RATE_LIMIT_PER_MINUTE: '0',
    EXECUTOR_CONCURRENCY: String(config.EXECUTOR_CONCURRENCY),
    SAGA_EXECUTE_INLINE: config.BENCH_EXECUTE_INLINE,
  };
  const profile = (role: string) => cpuProfileArgs(config, role);
  const children = [
    startRole('dispatcher', 'api', { ...env, HOST: '127.0.0.1', PORT: String(apiPort) }, profile('api')),
    startRole('dispatcher', 'relay', { ...env, METRICS_PORT: String(relayMetrics) }, profile('relay')),
    startRole(
      'dispatcher',
      'executor',
      { ...env, METRICS_PORT: String(executorMetrics) },
      profile('executor'),
    ),
  ];
  const baseUrl = `http://127.0.0.1:${apiPort}`;
  const roles: DispatcherRoles = {
    baseUrl,
    children,
    assertRunning() {
      const dead = children.find((c) => !c.running());
      if (dead) throw new Error(`the ${dead.name} process exited during the bench:\n${dead.output()}`);
    },
    async stop() {
      return Promise.all(
        children.map(async (c) => {
          const r = await c.stop(STOP_GRACE_MS);
          return { role: c.name, code: r.code, signal: r.signal, killed: r.killed };
        }),
      );
    },
  };
  try {
    const ok = (url: string) => async () => (await fetch(url)).ok;
    // The metrics servers start after the relay's LISTEN and the executor's worker are up.
    await waitUntil('the API /readyz', ok(`${baseUrl}/readyz`), READY_TIMEOUT_MS, children);
    await waitUntil('the relay', ok(`http://127.0.0.1:${relayMetrics}/metrics`), READY_TIMEOUT_MS, children);
    await waitUntil(
      'the executor',
      ok(`http://127.0.0.1:${executorMetrics}/metrics`),
      READY_TIMEOUT_MS,
      children,
    );
  } catch (err) {
    await roles.stop();
    throw err;
  }
  return roles;
}
