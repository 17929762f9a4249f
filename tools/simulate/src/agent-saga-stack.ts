/**
 * The agent-saga harness as a user runs it: a sandbox of its own (in this process, on free ports), a
 * schema and a queue prefix of the simulation's own in the machine's Postgres and Redis, migrated as
 * `agent-saga migrate` does, an agent token, and every role (two api replicas behind a balancer, relay, two
 * executors, reconciler, compensator) its own process under the soak's supervisor
 * (test/soak/start-roles.ts), loading the real connectors with short tool timeouts, and the operator who
 * decides held emails (approve-held-emails.ts).
 *
 * Why two api replicas: `api_restart` kills the api an agent's call waits on, and at 64 episodes in flight
 * that fault fires every few seconds. With a single api it was down some 40 % of a 2,000-episode run (142
 * kills in 12 minutes, each a 1.5 s boot), and every other episode's agent met the outage too: the eager
 * ones ran out of patience (17 of 1,695 episodes missed, measured 2 December 2026). A deployment runs
 * several api processes behind one address for this reason; the fault kills the one holding the call.
 *
 * Why the roles start from bundles (`agent-saga bundle`, when the run is compiled): the process faults kill
 * and restart a role every few seconds, and a role loaded file by file took about twice the CPU to start
 * (api 1.1 s against 0.5 s, executor 0.8 s against 0.35 s on a quiet machine), on the two cores the
 * episodes share; a role down longer is an agent waiting longer.
 *
 * `close()` stops every process and drops the schema and the queues, however the simulation ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createSagaClient, type SagaClient } from '@agent-saga/client';
import { bundleRoles, BUNDLED_ROLES, type BundledRole } from '@agent-saga/cli';
import {
  createApiToken,
  createDb,
  freePort,
  migrateToLatest,
  rolesCompiled,
  type SagaDb,
} from '@agent-saga/core';
import { migrateConnectorTables } from '@agent-saga/connectors/migrations';
import { sandboxConnectorEnv, startSandbox, type RunningSandbox } from '@agent-saga/sandbox';
import { waitForRoles } from '../../../test/soak/role-readiness.js';
import { API_REPLICAS, ROLES, RoleSupervisor, type RoleName } from '../../../test/soak/start-roles.js';
import { startApiBalancer, type ApiBalancer } from './api-balancer.js';
import { approveHeldEmails } from './approve-held-emails.js';
import { operatorsFor, shareInbox } from './share-approval-inbox.js';
import { killOnHeldAnswers, type ProcessKills } from './kill-on-held-answer.js';
import { warehouseLookups } from './look-up-order.js';
import { dropQueues } from '@agent-saga/core/testing';
import {
  COMPENSATOR_UNKNOWN_MIN_WAIT_MS,
  JIRA_COMMIT_HORIZON_MS,
  SEARCH_LAG_MS,
  STRIPE_TIMEOUT_MS,
  TOOL_TIMEOUT_MS,
} from './sim-timings.js';

/** The cross-service tests' tool module: the real connectors, every tool's timeout capped. */
const SHORT_TIMEOUT_TOOLS = 'test/fixtures/support-tools-short-timeouts.mjs';

/** The stack's roles: the soak's, with the api as replicas. */
const STACK_ROLES: readonly RoleName[] = [...API_REPLICAS, ...ROLES.filter((r) => r !== 'api')];

/**
 * Role timings shortened so a recovery takes seconds (as the soak's and the cross-service tests'), each
 * kept honest: a step whose answer was lost waits out its lease (the tool's timeout plus the margin) before
 * the reconciler looks it up, and the lookup allows for the vendors' search lag.
 */
const ROLE_TIMINGS: Readonly<Record<string, string>> = {
  LOG_LEVEL: 'warn',
  SAGA_FAST_PATH: 'true',
  RELAY_POLL_MS: '300',
  RELAY_GRACE_MS: '300',
  // Why 6: six processes share the machine's Postgres with other users; each also holds LISTEN and drafts.
  DB_POOL_SIZE: '6',
  EXECUTOR_CONCURRENCY: '40',
  LOOKUP_RECHECK_MS: '300',
  LEASE_MARGIN_MS: '500',
  STRIPE_TIMEOUT_MS: String(STRIPE_TIMEOUT_MS),
  TEST_TOOL_TIMEOUT_MS: String(TOOL_TIMEOUT_MS),
  // Jira's declared horizon: above the longest late commit the simulation plays (sim-timings.ts), and the
  // same for every other vendor (the short-timeout tool module's floor): an unwind must not believe a held
  // keyed write absent either.
  JIRA_COMMIT_HORIZON_MS: String(JIRA_COMMIT_HORIZON_MS),
  TEST_COMMIT_HORIZON_MS: String(JIRA_COMMIT_HORIZON_MS),
  EXECUTOR_LOCK_MS: '1000',
  EXECUTOR_STALLED_INTERVAL_MS: '1000',
  EXECUTOR_DRAIN_MS: '3000',
  RECONCILER_SWEEP_MS: '300',
  RECONCILER_SCAN_MS: '2000',
  RECONCILER_BACKOFF_BASE_MS: '300',
  RECONCILER_LEASE_MARGIN_MS: '1000',
  COMPENSATOR_SWEEP_MS: '300',
  COMPENSATOR_POLL_MS: '100',
  COMPENSATION_BACKOFF_MS: '200',
  COMPENSATOR_LEASE_MARGIN_MS: '500',
  COMPENSATOR_UNKNOWN_MIN_WAIT_MS: String(COMPENSATOR_UNKNOWN_MIN_WAIT_MS),
  // Why 60 s: `send_email`'s lookup reads every email of the window one by one (Resend's list has no tag
  // filter), at most EMAIL_LOOKUP_MAX_READS (200), and all of a run's emails share one sandbox account.
  // With the default day, a run of a few hundred episodes filled the window: a lookup after a dropped email
  // timed out or hit the cap every time, and the unwind sent the step to a person (39 of 2,000 episodes,
  // none at 500). A minute holds some 100 emails at 64 in flight, and is past any lookup of an episode's
  // email that matters; an older one taken for absent is re-sent under its key, which the sandbox replays.
  EMAIL_LOOKUP_WINDOW_MS: '60000',
  // Why 1 s: a lookup skips the emails older than its step less this margin for the clocks' skew, and the
  // sandbox stamps emails with this machine's clock, as Postgres stamps steps: a lookup reads the emails
  // sent since its step began (a few dozen), not the whole minute.
  EMAIL_LOOKUP_CLOCK_SKEW_MS: '1000',
  COMPENSATOR_DRAIN_MS: '3000',
};

export interface AgentSagaStack {
  readonly saga: SagaClient;
  readonly sandbox: RunningSandbox;
  /** The run ids among `runIds` with an open case (something a person can read and settle). */
  openCases(runIds: readonly string[]): Promise<ReadonlySet<string>>;
  close(): Promise<void>;
}

export async function startAgentSagaStack(opts: {
  readonly repoRoot: string;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly seed: number;
  /** Episodes in flight at once: how many operators decide held emails (share-approval-inbox.ts). */
  readonly concurrency: number;
  /** Keep the schema at the end (`--keep-log`): the saga log of every episode, to read after the run. */
  readonly keepLog?: boolean;
  readonly say: (line: string) => void;
}): Promise<AgentSagaStack> {
  const schema = `sim_${process.pid}_${opts.seed}`;
  const queuePrefix = `sim-${process.pid}-${opts.seed}`;
  const db: SagaDb = createDb({
    url: opts.databaseUrl,
    schema,
    poolSize: 2,
    applicationName: 'agent-saga-simulate',
  });
  const logDir = mkdtempSync(join(tmpdir(), 'simulate-logs-'));
  const bundleDir = rolesCompiled() ? join(logDir, 'roles') : undefined;
  if (bundleDir) {
    const started = Date.now();
    await bundleRoles({
      tools: SHORT_TIMEOUT_TOOLS,
      outDir: bundleDir,
      roles: Object.keys(BUNDLED_ROLES) as BundledRole[],
      cwd: opts.repoRoot,
    });
    opts.say(`  agent-saga: roles bundled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  const supervisor = new RoleSupervisor(opts.repoRoot, logDir, { bundleDir });
  let sandbox: RunningSandbox | undefined;
  let stopApprover: (() => Promise<void>) | undefined;
  let processKills: ProcessKills | undefined;
  let balancer: ApiBalancer | undefined;
  const kill = () => supervisor.killAllNow();
  process.once('exit', kill);
  const close = async () => {
    process.off('exit', kill);
    await stopProcessFaults(processKills, opts.say);
    await stopApprover?.().catch(() => undefined);
    await supervisor.stopAll().catch(() => undefined);
    if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
    if (balancer) {
      const served = [...balancer.counts.served].map(([name, n]) => `${name} ${n}`).join(', ');
      opts.say(
        `  agent-saga: the balancer passed on ${served}; answered 502 ${balancer.counts.unavailable}×`,
      );
      await balancer.close().catch(() => undefined);
    }
    if (opts.keepLog) opts.say(`  agent-saga: the saga log is kept in schema ${schema} (--keep-log)`);
    else await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db).catch(() => undefined);
    await db.destroy().catch(() => undefined);
    await dropQueues(opts.redisUrl, queuePrefix).catch(() => undefined);
    await sandbox?.close().catch(() => undefined);
  };
  try {
    await migrateToLatest(db, schema);
    await migrateConnectorTables(db, schema);
    const token = await createApiToken(db, { tenantId: 'simulate', role: 'agent', label: 'simulate-agent' });
    const operatorToken = await createApiToken(db, {
      tenantId: 'simulate',
      role: 'operator',
      label: 'simulate-approver',
    });
    sandbox = await startSandbox({
      settings: { stripeSearchLagMs: SEARCH_LAG_MS, jiraSearchLagMs: SEARCH_LAG_MS },
    });
    const roleEnv = {
      DATABASE_URL: opts.databaseUrl,
      REDIS_URL: opts.redisUrl,
      SAGA_DB_SCHEMA: schema,
      SAGA_QUEUE_PREFIX: queuePrefix,
      HOST: '127.0.0.1',
      SAGA_CRASH_POINTS: '',
      ...sandboxConnectorEnv(sandbox, { lagMs: SEARCH_LAG_MS, toolsModule: SHORT_TIMEOUT_TOOLS }),
      ...ROLE_TIMINGS,
    };
    const replicas: { name: RoleName; url: string }[] = [];
    for (const role of STACK_ROLES) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      if (API_REPLICAS.some((r) => r === role)) {
        replicas.push({ name: role, url });
        supervisor.start(role, { ...roleEnv, PORT: String(port), METRICS_PORT: '0' }, url);
      } else supervisor.start(role, { ...roleEnv, PORT: '0', METRICS_PORT: String(port) }, url);
    }
    balancer = await startApiBalancer(replicas);
    const baseUrl = balancer.url;
    await waitForRoles(supervisor, () => false, STACK_ROLES);
    const approver = createSagaClient({ baseUrl, token: operatorToken });
    let lastError = '';
    processKills = killOnHeldAnswers(sandbox, supervisor, STACK_ROLES, balancer);
    const onApproverError = (e: unknown) => {
      const line = `  agent-saga: the approver failed: ${e instanceof Error ? e.message : String(e)}`;
      if (line !== lastError) opts.say(line);
      lastError = line;
    };
    const lookups = warehouseLookups(sandbox);
    const stops = shareInbox(approver, operatorsFor(opts.concurrency)).map((operator) =>
      approveHeldEmails(operator, lookups, onApproverError),
    );
    stopApprover = async () => {
      await Promise.all(stops.map((stop) => stop()));
    };
    opts.say(
      `  agent-saga: ${STACK_ROLES.join(', ')} up (api ${baseUrl} in front of ${replicas.map((r) => r.url).join(' and ')}, schema ${schema}, logs ${logDir})`,
    );
    return {
      saga: createSagaClient({ baseUrl, token }),
      sandbox,
      async openCases(runIds) {
        if (runIds.length === 0) return new Set();
        const rows = await db
          .selectFrom('cases')
          .select('run_id')
          .where('run_id', 'in', [...runIds])
          .where('status', '=', 'open')
          .execute();
        return new Set(rows.map((r) => r.run_id));
      },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Stops the process faults' watcher (its restarts finished) and says what it killed. */
async function stopProcessFaults(
  kills: ProcessKills | undefined,
  say: (line: string) => void,
): Promise<void> {
  if (kills === undefined) return;
  await kills.stop().catch(() => undefined);
  const made = [...kills.kills].map(([role, n]) => `${role} ${n}`).join(', ');
  say(
    `  agent-saga: process faults killed ${made === '' ? 'nothing' : made}; held answers with no sender found: ${kills.missed}`,
  );
}
