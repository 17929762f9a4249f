/**
 * `pnpm example:openai-agents`: an OpenAI Agents SDK agent (`run(agent, input)` with its run-state
 * interruptions) whose tools are agent-saga's (`sagaAgentTools` from `@agent-saga/openai-agents`), against
 * the vendor sandbox and the real connectors: the dispatcher (api, relay, executor) and the reconciler as
 * child processes. It ends with the sandbox's ledger: what the run really did.
 *
 * Without a key the model is scripted (a `Model` given to the runner by a `ModelProvider`, the SDK's own
 * interfaces) and behaves as a model would:
 *  1. reads the order (a pure tool);
 *  2. opens a ticket, and Jira's answer is lost (504 after the ticket was made): the model is told the
 *     outcome is UNKNOWN and makes the same call again, which lands on the same step and key;
 *  3. replans the ticket in other words: refused as DUPLICATE_OPERATION, naming the earlier ticket;
 *  4. charges the card;
 *  5. emails the customer: irreversible, so agent-saga holds it; the run ends with an interruption, an
 *     operator approves it through agent-saga (with the approval's hash), the bridge applies that decision
 *     to the SDK's `RunState`, and the run resumes from it.
 *
 * With OPENAI_API_KEY set, a real model (`OPENAI_MODEL`, default gpt-4o-mini, through the SDK's own
 * OpenAI provider) gets the same tools and the same task instead; the operator step is played the same way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import {
  Agent,
  Runner,
  Usage,
  type AgentInputItem,
  type Model,
  type ModelProvider,
  type RunState,
  type StreamEvent,
} from '@openai/agents';
import { createSagaClient } from '@agent-saga/client';
import { createSagaAgentApprovals, sagaAgentTools } from '@agent-saga/openai-agents';
import { createApiToken, createDb, freePort, migrateToLatest } from '@agent-saga/core';
import { sandboxConnectorEnv, startSandbox, type RunningSandbox } from '@agent-saga/sandbox';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
if (existsSync(resolve(root, '.env'))) process.loadEnvFile(resolve(root, '.env'));
const databaseUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!databaseUrl || !redisUrl) {
  console.error('DATABASE_URL and REDIS_URL are needed: run `pnpm bootstrap` first.');
  process.exit(2);
}

/** The example's own Postgres schema, dropped and re-migrated at start and dropped at the end. */
const schema = process.env.EXAMPLE_DB_SCHEMA ?? 'saga_openai_agents_example';
/** Why 800 ms: the vendors' search lag, long enough that the lookup right after the lost answer misses. */
const LAG_MS = 800;
const say = (line = '') => console.log(line);
const TASK =
  'Order 1183 (customer cus_sandbox_ada, ada@example.com) arrived broken. Open a support ticket, refund ' +
  'the 49.00 EUR by charging the card as a credit, and email Ada the refund confirmation.';
const INSTRUCTIONS =
  'You are a support agent. Tools go through agent-saga: when a result says the outcome is not known ' +
  'yet, call the same tool again with the same arguments; when it is refused, follow its whatToDo.';

/** The scripted model's plan: each call in turn, repeated while the harness says the outcome is not known. */
const PLAN: readonly { readonly tool: string; readonly args: Record<string, unknown> }[] = [
  { tool: 'get_order', args: { orderId: '1183' } },
  { tool: 'create_ticket', args: { summary: 'Refund for order #1183', orderId: '1183' } },
  { tool: 'create_ticket', args: { summary: 'Order 1183 arrived broken: refund', orderId: '1183' } },
  {
    tool: 'charge_card',
    args: { customerId: 'cus_sandbox_ada', amount: 4900, currency: 'eur', reason: 'Refund order 1183' },
  },
  {
    tool: 'send_email',
    args: {
      to: 'ada@example.com',
      template: 'refund_confirmation',
      vars: { amount: 4900, currency: 'eur', orderId: '1183' },
    },
  },
];
/** How long the scripted model "thinks" before it repeats a call whose outcome was not known. */
const THINK_MS = 500;
const NOT_YET = new Set(['UNKNOWN', 'INTENDED', 'AWAITING_APPROVAL', 'UNAVAILABLE']);

/** The status in the newest tool result of the model's input, as agent-saga wrote it (JSON text). */
function lastStatus(input: string | AgentInputItem[]): string | undefined {
  const last = typeof input === 'string' ? undefined : input.at(-1);
  if (last?.type !== 'function_call_result') return undefined;
  const text = typeof last.output === 'string' ? last.output : 'text' in last.output ? last.output.text : '';
  try {
    return (JSON.parse(text) as { status?: string }).status;
  } catch {
    return undefined;
  }
}

/** A scripted model on the SDK's `Model` interface: it reads the tool results in its input, as a real model would. */
function scriptedProvider(): ModelProvider {
  let next = 0;
  let n = 0;
  const model: Model = {
    async getResponse({ input }) {
      // The same call again while the outcome is not known; otherwise the next step of the plan.
      const repeat = next > 0 && NOT_YET.has(lastStatus(input) ?? '');
      const step = repeat ? PLAN[next - 1] : PLAN[next++];
      // A real model takes a while to answer; without a pause the retries would only count the lag.
      if (repeat) await new Promise((r) => setTimeout(r, THINK_MS));
      n++;
      return {
        usage: new Usage(),
        output: step
          ? [
              {
                type: 'function_call' as const,
                callId: `call-${n}`,
                name: step.tool,
                status: 'completed' as const,
                arguments: JSON.stringify(step.args),
              },
            ]
          : [
              {
                type: 'message' as const,
                role: 'assistant' as const,
                status: 'completed' as const,
                content: [
                  {
                    type: 'output_text' as const,
                    text: 'Ticket opened, refund charged, Ada emailed once approved.',
                  },
                ],
              },
            ],
      };
    },
    // eslint-disable-next-line require-yield -- the scripted model answers whole responses only
    async *getStreamedResponse(): AsyncIterable<StreamEvent> {
      await Promise.resolve();
      throw new Error('the scripted model does not stream');
    },
  };
  return { getModel: () => model };
}

/** The runner: the scripted model without a key; the SDK's OpenAI provider (its default) with one. */
function chooseRunner(): Runner {
  return process.env.OPENAI_API_KEY
    ? new Runner({ model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini', tracingDisabled: true })
    : new Runner({ modelProvider: scriptedProvider(), tracingDisabled: true });
}

function startRole(entry: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', resolve(root, entry)], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...env },
  });
}

async function waitReady(baseUrl: string): Promise<void> {
  for (let i = 0; ; i++) {
    const ok = await fetch(`${baseUrl}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (i > 120) throw new Error('the dispatcher did not become ready in 60 s');
    await new Promise((r) => setTimeout(r, 500));
  }
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
    `   (Jira answered the first ticket call 504 after making it; the model asked for a ticket ` +
      `${ticketCalls} times)`,
  );
  return { tickets: tickets.length, charges: charges.length, emails: emails.length };
}

async function main(): Promise<void> {
  const db = createDb({ url: databaseUrl!, schema });
  await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
  await migrateToLatest(db, schema);
  const agentToken = await createApiToken(db, {
    tenantId: 'acme',
    role: 'agent',
    label: 'openai-agents-example',
  });
  const operatorToken = await createApiToken(db, { tenantId: 'acme', role: 'operator', label: 'alice' });
  const sandbox = await startSandbox({ settings: { stripeSearchLagMs: LAG_MS, jiraSearchLagMs: LAG_MS } });
  const port = await freePort();
  const env = {
    ...sandboxConnectorEnv(sandbox, {
      lagMs: LAG_MS,
      toolsModule: 'packages/connectors/src/support-agent-tools.ts',
    }),
    DATABASE_URL: databaseUrl!,
    REDIS_URL: redisUrl!,
    SAGA_DB_SCHEMA: schema,
    SAGA_QUEUE_PREFIX: `openai-agents-example-${Date.now()}`,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    LOOKUP_RECHECK_MS: '200',
    RELAY_GRACE_MS: '300',
    RECONCILER_SWEEP_MS: '500',
  };
  say(`starting the dispatcher (api :${port}, relay, executor) and the reconciler on the real connectors …`);
  const children = [
    startRole('services/dispatcher/src/bin/all.ts', env),
    startRole('services/reconciler/src/bin/reconciler.ts', env),
  ];
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitReady(baseUrl);
    const saga = createSagaClient({ baseUrl, token: agentToken });
    const operator = createSagaClient({ baseUrl, token: operatorToken });
    const { runId } = await saga.createRun({ runId: `openai-agents-1183-${Date.now()}`, goal: TASK });
    say(`run ${runId} created`);
    // Jira makes the first ticket, then its answer is lost.
    sandbox.admin.addFault({
      vendor: 'jira',
      method: 'POST',
      path: '/rest/api/3/issue',
      nth: 1,
      kind: 'error_after',
    });

    const approvals = createSagaAgentApprovals(saga);
    const agent = new Agent({
      name: 'support',
      instructions: INSTRUCTIONS,
      tools: sagaAgentTools(saga.run(runId), { tools: await saga.listTools(), approvals, waitMs: 2_000 }),
    });
    const runner = chooseRunner();
    let ticketCalls = 0;
    // Every tool result the model reads, those of approved calls run on resume included.
    runner.on('agent_tool_end', (_ctx, _agent, tool, result) => {
      say(`   ${tool.name.padEnd(14)} → ${result.slice(0, 150)}`);
      if (tool.name === 'create_ticket') ticketCalls++;
    });
    const runTurns = (from: string | RunState<unknown, typeof agent>) =>
      runner.run(agent, from, { maxTurns: 15 });
    let input: string | RunState<unknown, typeof agent> = TASK;
    for (let round = 1; round <= 3; round++) {
      const result = await runTurns(input);
      if (result.interruptions.length === 0) {
        say(`\nthe model: ${String(result.finalOutput)}`);
        break;
      }
      for (const item of result.interruptions) {
        const approval = await approvals.approvalFor(item);
        if (!approval) continue;
        say(
          `\n   ${item.name ?? 'a tool'} is held in agent-saga: approval ${approval.id}, hash ${approval.hash.slice(0, 12)}…`,
        );
        say(`   the operator (alice) reads it and approves it through agent-saga's API, with that hash`);
        await operator.decideApproval(approval.id, { decision: 'approve', hash: approval.hash });
      }
      await approvals.applyDecisions(result.state, { timeoutMs: 10_000 });
      say("   the run resumes from its RunState with the harness's decision\n");
      input = result.state;
    }

    const view = await saga.getRun(runId);
    say('\n\x1b[1mThe run, as the log tells it\x1b[0m');
    for (const s of view.steps)
      say(`   step ${s.stepIdx} ${s.tool.padEnd(14)} ${s.status.padEnd(10)} ${s.externalRef ?? ''}`);
    const counts = printLedger(sandbox, new Set(view.steps.map((s) => s.idempotencyKey)), ticketCalls);
    const once = counts.tickets === 1 && counts.charges === 1 && counts.emails === 1;
    say(
      once
        ? '\none ticket, one charge, one email: each effect exactly once.'
        : '\nnot one of each: see above.',
    );
    // The scripted model always asks for all three; a real model may choose otherwise.
    if (!once && !process.env.OPENAI_API_KEY) process.exitCode = 1;
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(
      children.map((c) => new Promise((r) => (c.exitCode === null ? c.once('exit', r) : r(null)))),
    );
    await sandbox.close();
    await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
    await db.destroy();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
