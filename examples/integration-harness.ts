/**
 * The running product around the sandbox, for an integration example (`examples/ai-sdk-agent.ts`,
 * `examples/openai-agents.ts`, `examples/mcp/run-mcp-example.ts`): the example's own Postgres schema dropped
 * and migrated, the vendor sandbox with a search lag, the dispatcher's roles (api, relay, executor) and the
 * reconciler as child processes on the real connectors, an agent's and an operator's token, and at the end
 * the run's log and the sandbox's ledger. Each example keeps only its own story: the framework, its model
 * and its loop.
 *
 * Every example plays the same support task (`support-task.ts`); the Jira fault its plan meets is armed
 * here, by the product.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SagaClient } from '@agent-saga/client';
import { nodeArgsFor } from '@agent-saga/core';
import type { RunningSandbox } from '@agent-saga/sandbox';
import { SUPPORT_TASK } from './support-task.js';

/** The repository root: every child process runs from it. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Prints one line of the example's story. */
export const say = (line = ''): void => console.log(line);

/** Why 800 ms: the vendors' search lag, long enough that the lookup right after the lost answer misses. */
const LAG_MS = 800;
/** Why 90 s: four roles boot in 5–10 s here, far longer beside other tests on a loaded two-core machine. */
const READY_TIMEOUT_MS = 90_000;
/** Why 100 ms: readiness polls are cheap, and a coarser poll only adds to every example's start. */
const READY_POLL_MS = 100;
/** Why 10 s: a role drains its calls under way on SIGTERM; past this it is killed. */
const STOP_GRACE_MS = 10_000;

/** Timings shortened so that the story plays in seconds; the roles read only their own. */
const SHORT_TIMINGS: Readonly<Record<string, string>> = {
  LOG_LEVEL: 'warn',
  METRICS_PORT: '0',
  // The re-check before "not found" is believed, after the lag.
  LOOKUP_RECHECK_MS: '200',
  // The relay sweeps the outbox only past this grace (2 s by default); the API publishes its own writes.
  RELAY_GRACE_MS: '300',
  // How soon the reconciler looks up the UNKNOWN ticket.
  RECONCILER_SWEEP_MS: '300',
};

/**
 * The roles, each started directly rather than through the dispatcher's `all.ts`, which would be one more
 * process loading the core through tsx (about 4 s of a two-core machine's start-up).
 */
const ROLE_ENTRIES = [
  'services/dispatcher/src/bin/api.ts',
  'services/dispatcher/src/bin/relay.ts',
  'services/dispatcher/src/bin/executor.ts',
  'services/reconciler/src/bin/reconciler.ts',
] as const;

/** The product as an example's story sees it. */
export interface ExampleProduct {
  readonly sandbox: RunningSandbox;
  /** The dispatcher's API, e.g. `http://127.0.0.1:41234`. */
  readonly baseUrl: string;
  /**
   * Whether a real model plays: OPENAI_API_KEY is set (in the environment or `.env`). A real model may
   * choose otherwise than the script, so its ledger is printed but not checked.
   */
  readonly realModel: boolean;
  /** The agent's bearer token (tenant acme). */
  readonly agentToken: string;
  /** The API as the agent. */
  readonly saga: SagaClient;
  /** The API as the operator, alice. */
  readonly operator: SagaClient;
  /** Creates the run every example plays and arms the fault it meets: Jira makes the first ticket, then its answer is lost. */
  readonly createRun: () => Promise<string>;
  /** The operator reads a held call and approves it through agent-saga's API, with the approval's hash. */
  readonly approve: (
    toolName: string,
    approval: { readonly id: string; readonly hash: string },
  ) => Promise<void>;
}

/** Which effects a scripted story must leave in the ledger, each once (1) or not at all (0). */
export interface ExpectedEffects {
  readonly tickets: 0 | 1;
  readonly charges: 0 | 1;
  readonly emails: 0 | 1;
}

/** An example's own story, played on the running product. */
export type Story = (product: ExampleProduct) => Promise<StoryOutcome>;

/** What a story hands back: its run, and how often the agent asked for a ticket. */
export interface StoryOutcome {
  readonly runId: string;
  readonly ticketCalls: number;
}

/** One more process an example needs beside the roles (the MCP gateway), started with them. */
export interface ExtraProcess {
  /** Its entry, relative to the repository root, run as `node --import tsx <entry>`. */
  readonly entry: string;
  /** Its configuration, on top of the example's environment (it gets none of the roles'). */
  readonly env: Readonly<Record<string, string>>;
  /** Polled until it answers 2xx, before the story starts. */
  readonly readyUrl: string;
}

/** What an example says about itself. */
export interface ExampleSpec {
  /** Names the run, the tokens and the queue prefix, e.g. `openai-agents`. */
  readonly name: string;
  /** The example's own Postgres schema, unless EXAMPLE_DB_SCHEMA names another (the tests' own). */
  readonly defaultSchema: string;
  /** A story without a model (a scripted client): checked against the script even with OPENAI_API_KEY set. */
  readonly scriptedOnly?: boolean;
  /** Processes to start beside the roles, given the API's base URL. */
  readonly alongside?: (baseUrl: string) => readonly ExtraProcess[];
  /** What the scripted story leaves in the ledger: one of each unless said otherwise. */
  readonly expected?: ExpectedEffects;
}

const ONE_OF_EACH: ExpectedEffects = { tickets: 1, charges: 1, emails: 1 };

/**
 * Runs an example: starts the product, plays `story`, prints the outcome, and tears everything down
 * (children, sandbox, schema) however the story ends. The exit code is 1 when the story throws, or when a
 * scripted story's ledger is not as expected; 2 without DATABASE_URL and REDIS_URL.
 */
export function runExample(spec: ExampleSpec, story: Story): void {
  playExample(spec, story).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}

async function playExample(spec: ExampleSpec, story: Story): Promise<void> {
  if (existsSync(resolve(REPO_ROOT, '.env'))) process.loadEnvFile(resolve(REPO_ROOT, '.env'));
  const databaseUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!databaseUrl || !redisUrl) {
    console.error('DATABASE_URL and REDIS_URL are needed: run `pnpm bootstrap` first.');
    process.exit(2);
  }
  // Why imported here, not at the top: the examples' smoke tests import `startExampleProcess` from this
  // file, and static imports would load the core, the client and the sandbox into each test's worker for
  // nothing (seconds of CI's two cores per file).
  const [{ sql }, { createSagaClient }, core, { sandboxConnectorEnv, startSandbox }] = await Promise.all([
    import('kysely'),
    import('@agent-saga/client'),
    import('@agent-saga/core'),
    import('@agent-saga/sandbox'),
  ]);
  const { createApiToken, createDb, freePort, migrateToLatest } = core;
  const schema = process.env.EXAMPLE_DB_SCHEMA || spec.defaultSchema;
  const db = createDb({ url: databaseUrl, schema });
  const children = childProcesses();
  let sandbox: RunningSandbox | undefined;
  try {
    await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
    await migrateToLatest(db, schema);
    const agentToken = await createApiToken(db, {
      tenantId: 'acme',
      role: 'agent',
      label: `${spec.name}-example`,
    });
    const operatorToken = await createApiToken(db, { tenantId: 'acme', role: 'operator', label: 'alice' });
    sandbox = await startSandbox({ settings: { stripeSearchLagMs: LAG_MS, jiraSearchLagMs: LAG_MS } });
    const port = await freePort();
    const roleEnv: Record<string, string> = {
      ...sandboxConnectorEnv(sandbox, {
        lagMs: LAG_MS,
        toolsModule: 'packages/connectors/src/support-agent-tools.ts',
      }),
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      SAGA_DB_SCHEMA: schema,
      SAGA_QUEUE_PREFIX: `${spec.name}-example-${Date.now()}`,
      HOST: '127.0.0.1',
      PORT: String(port),
      ...SHORT_TIMINGS,
    };
    say(
      `starting the dispatcher (api :${port}, relay, executor) and the reconciler on the real connectors …`,
    );
    for (const entry of ROLE_ENTRIES) children.start(entry, roleEnv);
    const baseUrl = `http://127.0.0.1:${port}`;
    // Started with the roles, not after them: each is a tsx process whose start-up is the example's longest wait.
    const extras = spec.alongside?.(baseUrl) ?? [];
    for (const extra of extras) children.start(extra.entry, extra.env);
    for (const readyUrl of [`${baseUrl}/readyz`, ...extras.map((x) => x.readyUrl)])
      await children.waitReady(readyUrl);
    const product = productFor({
      sandbox,
      baseUrl,
      agentToken,
      saga: createSagaClient({ baseUrl, token: agentToken }),
      operator: createSagaClient({ baseUrl, token: operatorToken }),
      spec,
    });
    const outcome = await story(product);
    const asExpected = await report(product, outcome, spec.expected ?? ONE_OF_EACH);
    // The scripted model always plays the whole plan; a real model may choose otherwise.
    if (!asExpected && !product.realModel) process.exitCode = 1;
  } finally {
    await children.stopAll();
    await sandbox?.close();
    await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
    await db.destroy();
  }
}

function productFor(parts: {
  readonly sandbox: RunningSandbox;
  readonly baseUrl: string;
  readonly agentToken: string;
  readonly saga: SagaClient;
  readonly operator: SagaClient;
  readonly spec: ExampleSpec;
}): ExampleProduct {
  const { sandbox, baseUrl, agentToken, saga, operator, spec } = parts;
  return {
    sandbox,
    baseUrl,
    realModel: !spec.scriptedOnly && Boolean(process.env.OPENAI_API_KEY),
    agentToken,
    saga,
    operator,
    async createRun() {
      const { runId } = await saga.createRun({
        runId: `${spec.name}-1183-${Date.now()}`,
        goal: SUPPORT_TASK.request,
      });
      say(`run ${runId} created`);
      sandbox.admin.addFault({
        vendor: 'jira',
        method: 'POST',
        path: '/rest/api/3/issue',
        nth: 1,
        kind: 'error_after',
      });
      return runId;
    },
    async approve(toolName, approval) {
      say(
        `\n   ${toolName} is held in agent-saga: approval ${approval.id}, hash ${approval.hash.slice(0, 12)}…`,
      );
      say(`   the operator (alice) reads it and approves it through agent-saga's API, with that hash`);
      await operator.decideApproval(approval.id, { decision: 'approve', hash: approval.hash });
    },
  };
}

/** Prints the run's log and the sandbox's ledger; true when each effect happened as often as expected. */
async function report(
  product: ExampleProduct,
  { runId, ticketCalls }: StoryOutcome,
  expected: ExpectedEffects,
): Promise<boolean> {
  const view = await product.saga.getRun(runId);
  say('\n\x1b[1mThe run, as the log tells it\x1b[0m');
  for (const s of view.steps)
    say(`   step ${s.stepIdx} ${s.tool.padEnd(14)} ${s.status.padEnd(10)} ${s.externalRef ?? ''}`);
  const keys = new Set(view.steps.map((s) => s.idempotencyKey));
  const counts = printLedger(product.sandbox, keys, ticketCalls);
  const asExpected =
    counts.tickets === expected.tickets &&
    counts.charges === expected.charges &&
    counts.emails === expected.emails;
  const each = [
    expected.tickets === 1 ? 'one ticket' : undefined,
    expected.charges === 1 ? 'one charge' : undefined,
    expected.emails === 1 ? 'one email' : undefined,
  ].filter(Boolean);
  say(asExpected ? `\n${each.join(', ')}: each effect exactly once.` : '\nnot as expected: see above.');
  return asExpected;
}

/** The example's child processes, from the repository root: each `node --import tsx <entry>`, or compiled (`nodeArgsFor`). */
function childProcesses() {
  const children: ChildProcess[] = [];
  const running = () => children.filter((c) => c.exitCode === null && c.signalCode === null);
  return {
    /** Starts `entry` with `env` on top of the example's environment; its stdout is dropped, its stderr shown. */
    start(entry: string, env: Readonly<Record<string, string>>): void {
      const child = spawn(process.execPath, nodeArgsFor(resolve(REPO_ROOT, entry)), {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, ...env },
      });
      children.push(child);
    },
    /** Polls `readyUrl` until it answers 2xx; fails at once if a child exits meanwhile (its stderr is shown). */
    async waitReady(readyUrl: string): Promise<void> {
      const deadline = Date.now() + READY_TIMEOUT_MS;
      for (;;) {
        const dead = children.find((c) => !running().includes(c));
        if (dead) throw new Error(`${String(dead.spawnargs.at(-1))} exited during start-up`);
        const ok = await fetch(readyUrl).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) return;
        if (Date.now() > deadline) throw new Error(`${readyUrl} did not answer in ${READY_TIMEOUT_MS} ms`);
        await new Promise((r) => setTimeout(r, READY_POLL_MS));
      }
    },
    /** SIGTERM to each child still running, then SIGKILL past the grace; resolves once all have exited. */
    async stopAll(): Promise<void> {
      await Promise.all(
        running().map(async (child) => {
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
          await exited;
          clearTimeout(timer);
        }),
      );
    },
  };
}

/** Prints the run's effects in the sandbox and returns how many of each there are. */
function printLedger(
  sandbox: RunningSandbox,
  keys: ReadonlySet<string>,
  ticketCalls: number,
): { tickets: number; charges: number; emails: number } {
  const ledger = sandbox.admin.ledger();
  const charges = ledger.stripe.paymentIntents.filter(
    (pi) => pi.idempotencyKey && keys.has(pi.idempotencyKey),
  );
  const tickets = ledger.jira.issues.filter((i) => i.labels.some((l) => keys.has(l.replace(/^saga-/, ''))));
  const emails = ledger.email.emails.filter((e) => e.idempotencyKey && keys.has(e.idempotencyKey));
  say('\n\x1b[1mThe sandbox ledger for this run\x1b[0m');
  say(`   Jira tickets:   ${tickets.length}  ${tickets.map((t) => t.key).join(' ')}`);
  say(
    `   Stripe charges: ${charges.length}  ${charges.map((c) => `${c.id} ${c.amount} ${c.currency}`).join(' ')}`,
  );
  say(`   emails sent:    ${emails.length}`);
  say(
    `   (Jira answered the first ticket call 504 after making it; the agent asked for a ticket ` +
      `${ticketCalls} times)`,
  );
  return { tickets: tickets.length, charges: charges.length, emails: emails.length };
}
