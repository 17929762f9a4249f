/**
 * The harness as the demo deploys it: the dispatcher's three roles (api, relay, executor), the reconciler
 * and the compensator, each its own process against the demo's schema and queue prefix, with the support
 * agent's connectors pointed at the sandbox. Timings are shortened so the story plays in seconds; each
 * shortened value says why.
 */
import type { DemoConfig } from './demo-config.js';
import { freePort } from '@agent-saga/core';
import type { ProcessSupervisor, SupervisedProcess } from './process-supervisor.js';
import { DEFAULT_CREDENTIALS, sandboxConnectorEnv, type SandboxUrls } from '@agent-saga/sandbox';
import { DEMO_SEARCH_LAG_MS } from './sandbox-admin.js';
import { waitFor } from './wait-for.js';

const DISPATCHER_BIN = 'services/dispatcher/src/bin';
const ENTRY = {
  api: `${DISPATCHER_BIN}/api.ts`,
  relay: `${DISPATCHER_BIN}/relay.ts`,
  executor: `${DISPATCHER_BIN}/executor.ts`,
  reconciler: 'services/reconciler/src/bin/reconciler.ts',
  compensator: 'services/compensator/src/bin/compensator.ts',
} as const;

/** The connector configuration that points every vendor at the sandbox. */
const connectorEnv = (urls: SandboxUrls): Record<string, string> =>
  sandboxConnectorEnv(
    { urls, credentials: DEFAULT_CREDENTIALS },
    { lagMs: DEMO_SEARCH_LAG_MS, toolsModule: 'packages/connectors/src/support-agent-tools.ts' },
  );

/** Timings of the demo; every role reads only its own. */
const SHORT_TIMINGS: Readonly<Record<string, string>> = {
  LOG_LEVEL: 'warn',
  SAGA_FAST_PATH: 'true',
  RELAY_POLL_MS: '500',
  // The API publishes what it writes itself (the fast path); what the executor writes (a pivot's next
  // commit step) waits in the outbox for the relay, which sweeps rows only after this grace (2 s by default).
  RELAY_GRACE_MS: '300',
  DB_POOL_SIZE: '4',
  LOOKUP_RECHECK_MS: '200',
  LEASE_MARGIN_MS: '500',
  // A short Stripe timeout keeps the killed executor's lease short (timeout × requests + margin).
  STRIPE_TIMEOUT_MS: '1000',
  // A dead executor's BullMQ job comes back within a second or two.
  EXECUTOR_LOCK_MS: '1000',
  EXECUTOR_STALLED_INTERVAL_MS: '500',
  EXECUTOR_DRAIN_MS: '5000',
  RECONCILER_SWEEP_MS: '500',
  RECONCILER_BACKOFF_BASE_MS: '200',
  RECONCILER_LEASE_MARGIN_MS: '500',
  COMPENSATOR_SWEEP_MS: '500',
  COMPENSATOR_POLL_MS: '100',
  COMPENSATION_BACKOFF_MS: '200',
  COMPENSATOR_LEASE_MARGIN_MS: '500',
  // An unknown that outlasts this goes to a person; in the story every step is settled before the unwind.
  COMPENSATOR_UNKNOWN_MIN_WAIT_MS: '3000',
  COMPENSATOR_DRAIN_MS: '3000',
};

export interface Harness {
  readonly baseUrl: string;
  /** The executor processes started so far; the healthy one the story stops is the first. */
  readonly executors: readonly SupervisedProcess[];
  /** Starts one more executor, with `extra` on top of the harness's environment (e.g. a crash point). */
  startExecutor(extra?: Readonly<Record<string, string>>): SupervisedProcess;
}

/** Starts every role and waits until the API is ready. */
export async function startHarness(
  supervisor: ProcessSupervisor,
  config: DemoConfig,
  sandbox: SandboxUrls,
): Promise<Harness> {
  const port = await freePort();
  const env: Record<string, string> = {
    DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.redisUrl,
    SAGA_DB_SCHEMA: config.schema,
    SAGA_QUEUE_PREFIX: config.queuePrefix,
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: '0',
    SAGA_CRASH_POINTS: '',
    ...connectorEnv(sandbox),
    ...SHORT_TIMINGS,
  };
  const executors: SupervisedProcess[] = [];
  const startExecutor = (extra: Readonly<Record<string, string>> = {}) => {
    const p = supervisor.start(`executor#${executors.length + 1}`, ENTRY.executor, { ...env, ...extra });
    executors.push(p);
    return p;
  };
  supervisor.start('api', ENTRY.api, env);
  supervisor.start('relay', ENTRY.relay, env);
  startExecutor();
  supervisor.start('reconciler', ENTRY.reconciler, env);
  supervisor.start('compensator', ENTRY.compensator, env);

  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    'the API to be ready',
    async () => {
      const dead = supervisor.processes.find((p) => p.hasExited);
      if (dead) throw new Error(`${dead.name} exited at start:\n${dead.output()}`);
      return fetch(`${baseUrl}/readyz`).then(
        (r) => (r.ok ? true : undefined),
        () => undefined,
      );
    },
    // Why 90 s: five roles and the sandbox boot in 10–20 s here, past 45 s on a heavily loaded machine.
    90_000,
    200,
  );
  return { baseUrl, executors, startExecutor };
}
