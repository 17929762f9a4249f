/**
 * `pnpm soak`: the chaos soak. The product as a new user deploys it — the vendor sandbox and every role
 * its own process (api, relay, two executors, reconciler, compensator), the real connectors — with
 * scripted agents playing the refund-and-reship story while the soak breaks things, then checks from the
 * sandbox's ledger and the saga log that nothing was lost and nothing doubled.
 *
 * 1. Set-up: Postgres and Redis (the machine's, which the soak will restart, so it needs root; or its own
 *    with `--private-services`), a fresh schema of the soak's own migrated as `agent-saga migrate` does,
 *    a queue prefix of its own, an agent token, the sandbox seeded with one order per run (half of them
 *    refused by the warehouse), every role started and the api ready.
 * 2. The runs (runs started evenly over the profile's window, each agent patient or eager, see
 *    scripted-agent.ts) and the chaos (chaos-schedule.ts) at the same time.
 * 3. The wait: every run terminal, bounded by the profile's settle window.
 * 4. The checks (check-processes.ts, check-outcomes.ts, check-ledger.ts), each printed, then the last line
 *    `N passed, M failed`; the exit status is 1 on any failure.
 * 5. Clean-up, however the soak ends (SIGINT included): every child process, the schema and the queues,
 *    and the private services.
 *
 * Every wait has a deadline, and the whole soak a time bound: past it the soak stops with a failed check
 * rather than hang. A bad argument exits 2 with the usage line; so does a soak that lacks the right to
 * restart the machine's services, before it has started anything.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { createSagaClient } from '@agent-saga/client';
import { dropQueues } from '@agent-saga/core/testing';
import { createApiToken, createDb, freePort, migrateToLatest, type SagaDb } from '@agent-saga/core';
import { migrateConnectorTables } from '@agent-saga/connectors/migrations';
import { drawChaosSchedule, playChaos, type ChaosLogEntry } from './chaos-schedule.js';
import { checkLedger } from './check-ledger.js';
import { checkOutcomes } from './check-outcomes.js';
import { checkChaosPlayed, checkNoOwnExits } from './check-processes.js';
import { startPrivateServices } from './private-services.js';
import { readSagaLog, waitForTerminalRuns } from './read-saga-log.js';
import { connectorEnv, startSandbox, type SandboxAdmin } from './sandbox-admin.js';
import { playAgent, type AgentPlan, type AgentResult } from './scripted-agent.js';
import { seededRandom, sleep } from './seeded-random.js';
import { machineServices, NeedsRootError, type ServiceControl } from './service-control.js';
import { parseSoakOptions, type SoakOptions } from './soak-options.js';
import { printReport, type Check } from './soak-report.js';
import { checkReadyAgain, waitForRoles } from './role-readiness.js';
import { ROLES, RoleSupervisor } from './start-roles.js';

/** The repository root: every child process runs here, and entry points are resolved from it. */
const REPO_ROOT = resolve(import.meta.dirname, '../..');

const say = (line: string) => process.stdout.write(`${line}\n`);

/**
 * Timings of every role, shortened so recoveries take seconds (as the demo's), each kept honest: the
 * tools keep their own timeouts (Jira, email and shipping 30 s), so a step whose executor died mid-call
 * waits out its real lease before the reconciler looks it up.
 */
const ROLE_TIMINGS: Readonly<Record<string, string>> = {
  LOG_LEVEL: 'warn',
  SAGA_FAST_PATH: 'true',
  RELAY_POLL_MS: '500',
  RELAY_GRACE_MS: '500',
  // Why 6: six processes share the soak's Postgres; each also holds a LISTEN connection and a drafts pool.
  DB_POOL_SIZE: '6',
  EXECUTOR_CONCURRENCY: '20',
  LOOKUP_RECHECK_MS: '300',
  LEASE_MARGIN_MS: '1000',
  // Why 2 s: Stripe's client timeout; a charge makes two requests, so its lease is 4 s plus the margin.
  STRIPE_TIMEOUT_MS: '2000',
  // Jira's commit horizon, as its tool timeout (30 s): the soak's sandbox commits a request when it arrives
  // or never (its faults lose answers, they hold no request), which is the contract this declares. With the
  // connector's conservative 120 s default, a close_ticket left unknown by a compensator killed mid-call
  // waited two minutes before its absence was believed, past the short profile's settle window (seen once:
  // a run still COMPENSATING at the end).
  JIRA_COMMIT_HORIZON_MS: '30000',
  // A dead or paused executor's BullMQ job comes back within a couple of seconds.
  EXECUTOR_LOCK_MS: '1000',
  EXECUTOR_STALLED_INTERVAL_MS: '1000',
  EXECUTOR_DRAIN_MS: '5000',
  RECONCILER_SWEEP_MS: '1000',
  RECONCILER_SCAN_MS: '5000',
  RECONCILER_BACKOFF_BASE_MS: '500',
  RECONCILER_LEASE_MARGIN_MS: '1000',
  COMPENSATOR_SWEEP_MS: '1000',
  COMPENSATOR_POLL_MS: '200',
  COMPENSATION_BACKOFF_MS: '300',
  COMPENSATOR_LEASE_MARGIN_MS: '1000',
  COMPENSATOR_DRAIN_MS: '3000',
};

/** Why 4 minutes: set-up (migrations, seven `tsx` processes booting on two cores) and clean-up. */
const OVERHEAD_MS = 4 * 60_000;

interface Running {
  services?: ServiceControl;
  supervisor?: RoleSupervisor;
  db?: SagaDb;
  schema?: string;
  queuePrefix?: string;
}

async function main(options: SoakOptions): Promise<number> {
  const started = Date.now();
  const { profile } = options;
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const running: Running = {};
  const extraFailures: Check[] = [];
  let stopping = false;
  const isStopping = () => stopping;

  // The chaos may outlast its window: each infrastructure restart waits up to a minute for booting roles.
  const bound = profile.startWindowMs + profile.chaosWindowMs + 4 * 60_000 + profile.settleMs + OVERHEAD_MS;
  const timer = setTimeout(() => {
    stopping = true;
    extraFailures.push({
      name: `the soak finished within its time bound (${bound / 1000} s)`,
      ok: false,
      details: ['stopped'],
    });
    say(`\nthe soak passed its time bound of ${bound / 1000} s: stopping`);
  }, bound);
  timer.unref();
  let interrupted = false;
  process.once('SIGINT', () => {
    stopping = true;
    interrupted = true;
    say('\ninterrupted: stopping every process …');
  });
  process.once('exit', () => running.supervisor?.killAllNow());

  say(
    `pnpm soak: profile ${profile.name}, ${profile.runs} runs over ${profile.startWindowMs / 1000} s, seed ${options.seed}` +
      (options.executeInline ? ', API executing inline' : ''),
  );
  try {
    running.services = options.privateServices
      ? await startPrivateServices()
      : machineServices(options.databaseUrl, options.redisUrl);
  } catch (e) {
    if (e instanceof NeedsRootError) {
      say(`pnpm soak: ${e.message}`);
      return 2;
    }
    throw e;
  }
  const services = running.services;
  say(`  against ${services.description}`);
  const random = seededRandom(options.seed);
  const checks: Check[] = [];
  try {
    // 1. Set-up.
    const schema = `soak_${process.pid}_${options.seed}`;
    running.schema = schema;
    running.queuePrefix = `soak-${process.pid}-${options.seed}`;
    // The soak's own pool is open only while no fault is played: it has no more right to outlive a
    // Postgres restart than the roles, and the soak must not be what fails.
    running.db = createDb({
      url: services.databaseUrl,
      schema,
      poolSize: 2,
      applicationName: 'agent-saga-soak',
    });
    await migrateToLatest(running.db, schema);
    await migrateConnectorTables(running.db, schema); // as `agent-saga migrate`: the email connector's drafts
    const token = await createApiToken(running.db, { tenantId: 'acme', role: 'agent', label: 'soak-agent' });
    await running.db.destroy();
    running.db = undefined;

    const logDir = mkdtempSync(join(tmpdir(), 'soak-logs-'));
    say(`  every process's output: ${logDir}`);
    const supervisor = new RoleSupervisor(REPO_ROOT, logDir);
    running.supervisor = supervisor;
    const sandbox = await startSandbox(supervisor);
    const plans = planRuns(options, random);
    await sandbox.seed({
      orders: plans.map((p) => ({
        id: p.orderId,
        customerId: 'cus_sandbox_ada',
        items: [{ sku: p.sku, quantity: 1 }],
        eligibleForReship: !p.refused,
      })),
    });
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const roleEnv = {
      DATABASE_URL: services.databaseUrl,
      REDIS_URL: services.redisUrl,
      SAGA_DB_SCHEMA: schema,
      SAGA_QUEUE_PREFIX: running.queuePrefix,
      HOST: '127.0.0.1',
      PORT: String(port),
      SAGA_CRASH_POINTS: '',
      ...connectorEnv(sandbox.urls),
      ...ROLE_TIMINGS,
    };
    // Each worker serves /healthz and /readyz on a port of its own, kept across its restarts.
    for (const role of ROLES) {
      if (role === 'api')
        supervisor.start(
          role,
          {
            ...roleEnv,
            METRICS_PORT: '0',
            ...(options.executeInline ? { SAGA_EXECUTE_INLINE: 'true' } : {}),
          },
          baseUrl,
        );
      else {
        const metricsPort = await freePort();
        supervisor.start(
          role,
          { ...roleEnv, METRICS_PORT: String(metricsPort) },
          `http://127.0.0.1:${metricsPort}`,
        );
      }
    }
    await waitForRoles(supervisor, isStopping);
    say(`  sandbox and ${ROLES.join(', ')} up at ${elapsed()} (api ${baseUrl})`);

    // 2. The runs and the chaos, side by side.
    const saga = createSagaClient({ baseUrl, token });
    const schedule = drawChaosSchedule(profile, random);
    const t0 = Date.now();
    // Every run has the settle window after the last run started and after the last fault was played.
    const chaosEnded: { at?: number } = {};
    const agentsDeadline = () =>
      chaosEnded.at === undefined
        ? Infinity
        : Math.max(t0 + profile.startWindowMs, chaosEnded.at) + profile.settleMs;
    say(
      `  ${plans.length} runs start now; ${schedule.events.length} faults and ${schedule.lostAnswers.length} lost answers follow`,
    );
    const agents = Promise.all(
      plans.map(async (plan): Promise<AgentResult> => {
        await sleep(plan.startAtMs);
        if (stopping)
          return {
            plan,
            ending: 'gave up',
            notes: ['never started: the soak was stopping'],
            requests: 0,
            unavailable: 0,
          };
        return playAgent(
          saga,
          plan,
          () => stopping || Date.now() > agentsDeadline(),
          seededRandom(options.seed + plan.startAtMs),
        );
      }),
    );
    const chaos: readonly ChaosLogEntry[] = await playChaos(schedule, {
      supervisor,
      services,
      sandbox,
      t0,
      say,
      stopping: isStopping,
    });
    chaosEnded.at = Date.now();
    say(`  chaos over at ${elapsed()}; waiting for the agents`);
    const results = await agents;
    say(`  agents done at ${elapsed()}; waiting for every run to be terminal`);

    // 3. Every run terminal, or the settle window over.
    running.db = createDb({
      url: services.databaseUrl,
      schema,
      poolSize: 2,
      applicationName: 'agent-saga-soak',
    });
    const runIds = plans.map((p) => p.runId);
    await waitForTerminalRuns(running.db, runIds, agentsDeadline(), isStopping, (n) =>
      say(`  ${n} runs not terminal yet (${elapsed()})`),
    );

    // 4. The evidence, then the checks (none after SIGINT: nobody is waiting for a verdict).
    if (interrupted) throw new Error('interrupted (SIGINT)');
    const log = await readSagaLog(running.db, runIds);
    const ledger = await sandbox.ledger();
    const faults = await sandbox.faults();
    const exits = [...supervisor.exits];
    const readyAgain = await checkReadyAgain(supervisor);
    checks.push(...checkChaosPlayed({ supervisor, exits, chaos, faults, t0 }));
    checks.push(...checkNoOwnExits({ supervisor, exits, chaos, faults, t0 }), readyAgain);
    checks.push(...checkOutcomes(results, log));
    checks.push(...checkLedger(plans, ledger, log));
    await reportSandbox(sandbox);
  } catch (e) {
    checks.push({
      name: 'the soak ran to its end',
      ok: false,
      details: [e instanceof Error ? (e.stack ?? e.message) : String(e)],
    });
  } finally {
    clearTimeout(timer);
    await cleanUp(running, checks);
  }
  if (interrupted) return interruptedExit(say, elapsed());
  say(`\nchecks (after ${elapsed()}):`);
  const failed = printReport([...checks, ...extraFailures], options.json, say);
  return failed > 0 ? 1 : 0;
}

/** How an interrupted soak ends: everything cleaned up, no verdict, exit 130 as a shell expects. */
function interruptedExit(say: (line: string) => void, elapsed: string): number {
  say(`interrupted after ${elapsed}: every process stopped, nothing judged`);
  return 130;
}

/** One run per order: half refused by the warehouse, patient and eager agents mixed, starts spread evenly. */
function planRuns(options: SoakOptions, random: ReturnType<typeof seededRandom>): AgentPlan[] {
  const { runs, startWindowMs } = options.profile;
  const skus = ['TEE-L', 'MUG-BLUE', 'CAP-RED', 'SOCK-6'];
  return Array.from({ length: runs }, (_, i) => {
    const orderId = `soak-${options.seed}-${String(i + 1).padStart(3, '0')}`;
    return {
      runId: `run-${orderId}`,
      orderId,
      sku: random.pick(skus),
      refused: i % 2 === 1,
      // Alternating pairs, so both tempers meet both endings.
      temper: Math.floor(i / 2) % 2 === 0 ? 'patient' : 'eager',
      startAtMs: Math.round((i * startWindowMs) / runs),
    };
  });
}

/** Prints how many of the sandbox's faults fired (the ledger is judged in the checks). */
async function reportSandbox(sandbox: SandboxAdmin): Promise<void> {
  const faults = await sandbox.faults();
  say(`  sandbox: ${faults.filter((f) => f.fired > 0).length} of ${faults.length} lost answers fired`);
}

/** Stops every process, drops the schema and the queues, tears down private services; failures are checks. */
async function cleanUp(running: Running, checks: Check[]): Promise<void> {
  const problems: string[] = [];
  await running.supervisor
    ?.stopAll()
    .catch((e: unknown) => problems.push(`stopping the processes: ${String(e)}`));
  const services = running.services;
  if (services && running.schema) {
    const db =
      running.db ??
      createDb({
        url: services.databaseUrl,
        schema: running.schema,
        poolSize: 1,
        applicationName: 'agent-saga-soak',
      });
    await sql`DROP SCHEMA IF EXISTS ${sql.id(running.schema)} CASCADE`
      .execute(db)
      .catch((e: unknown) => problems.push(`dropping schema ${running.schema}: ${String(e)}`));
    await db.destroy().catch(() => undefined);
  }
  if (services && running.queuePrefix)
    await dropQueues(services.redisUrl, running.queuePrefix).catch((e: unknown) =>
      problems.push(`dropping queues ${running.queuePrefix}: ${String(e)}`),
    );
  await services?.close().catch((e: unknown) => problems.push(`tearing down the services: ${String(e)}`));
  if (problems.length > 0)
    checks.push({ name: 'the soak cleaned up after itself', ok: false, details: problems });
}

let options: SoakOptions;
try {
  options = parseSoakOptions(process.argv.slice(2), REPO_ROOT);
} catch (e) {
  console.error(`pnpm soak: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}
main(options).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`pnpm soak: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  },
);
