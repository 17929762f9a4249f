/**
 * The MCP gateway as a real child process in front of the running product (the dispatcher's api, relay
 * and executor and the reconciler as child processes on the vendor sandbox), driven by the official MCP
 * client over streamable HTTP and stdio. What is checked is what a user would: what the client reads, the
 * run's log, and the sandbox's ledger.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApiToken, freePort, nodeArgsFor } from '@agent-saga/core';
import { startMcpDesk } from '@agent-saga/sandbox';
import { writeDeskMapping } from '../../../test/fixtures/mcp-desk-mapping.js';
import { CHARGE_AMOUNT, runLedger } from '../../../test/fixtures/support-flow.js';
import { startSupportHarness, type SupportHarness } from '../../../test/fixtures/support-harness.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const BIN = resolve(REPO_ROOT, 'services/mcp-gateway/src/bin/mcp-gateway.ts');

const CHARGE = {
  customerId: 'cus_sandbox_ada',
  amount: CHARGE_AMOUNT,
  currency: 'eur',
  reason: 'Refund order 1182',
};
const CHARGE_PATH = { vendor: 'stripe', method: 'POST', path: '/v1/payment_intents' } as const;

let h: SupportHarness;
let gateway: GatewayProcess;
let mcpUrl: URL;
const clients: Client[] = [];

/** The gateway's environment: the harness's API, short waits. */
function gatewayEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, SAGA_API_URL: h.baseUrl, MCP_WAIT_MS: '4000', LOG_LEVEL: 'warn', ...extra };
}

interface GatewayProcess {
  readonly child: ChildProcess;
  readonly url: URL;
  output(): string;
  readonly exited: Promise<number | null>;
}

/** Starts a gateway process on a free port (HTTP mode) with `extra` in its environment. */
async function spawnGateway(extra: Record<string, string> = {}): Promise<GatewayProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, nodeArgsFor(BIN), {
    cwd: REPO_ROOT,
    env: gatewayEnv({ MCP_PORT: String(port), ...extra }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, url: new URL(`http://127.0.0.1:${port}/mcp`), output: () => out, exited };
}

/** Resolves once the gateway answers /healthz; throws with its output if it exits or never answers. */
async function ready(g: GatewayProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (g.child.exitCode !== null) throw new Error(`the gateway exited:\n${g.output()}`);
    const ok = await fetch(new URL('/healthz', g.url)).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`the gateway never answered:\n${g.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stop(g: GatewayProcess): Promise<number | null> {
  if (g.child.exitCode === null) g.child.kill('SIGTERM');
  return g.exited;
}

beforeAll(async () => {
  h = await startSupportHarness('mcp_gateway', ['relay', 'executor', 'reconciler']);
  gateway = await spawnGateway();
  mcpUrl = gateway.url;
  await ready(gateway);
}, 90_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  if (gateway) expect(await stop(gateway)).toBe(0); // SIGTERM drains and exits 0
  await h?.close();
});

/** A connected MCP client over streamable HTTP with `token` (the harness's agent token by default). */
async function connect(token: string = h.token): Promise<Client> {
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(mcpUrl, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

type Answer = CallToolResult & { structuredContent?: Record<string, unknown> };

async function call(
  client: Client,
  args: Record<string, unknown>,
  options: { runId?: string; signal?: AbortSignal; tool?: string } = {},
): Promise<Answer> {
  return (await client.callTool(
    {
      name: options.tool ?? 'charge_card',
      arguments: args,
      ...(options.runId === undefined ? {} : { _meta: { 'agent-saga/runId': options.runId } }),
    },
    undefined,
    options.signal ? { signal: options.signal } : {},
  )) as Answer;
}

/** What a patient client does with "not known yet": the same call again, a little later. */
async function callUntilSettled(
  client: Client,
  args: Record<string, unknown>,
  options: { runId?: string } = {},
): Promise<{ answers: Answer[] }> {
  const answers: Answer[] = [];
  for (let i = 0; i < 40; i++) {
    const answer = await call(client, args, options);
    answers.push(answer);
    if (!['UNKNOWN', 'INTENDED'].includes(String(answer.structuredContent?.status))) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return { answers };
}

const metaOf = (a: Answer) => a._meta as Record<string, unknown>;

async function ledgerOf(runId: string) {
  const run = await h.saga.getRun(runId);
  return { run, ledger: runLedger(h.sandbox.admin.ledger(), run) };
}

describe('the MCP gateway in front of the harness', () => {
  it('lists the harness tools with annotations from their classes', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const harness = await h.saga.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(harness.map((t) => t.name).sort());

    const byName = new Map(tools.map((t) => [t.name, t]));
    const getOrder = byName.get('get_order')!;
    expect(getOrder.annotations).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(getOrder._meta).toMatchObject({ 'agent-saga/class': 'pure' });
    const charge = byName.get('charge_card')!;
    const chargeView = harness.find((t) => t.name === 'charge_card')!;
    expect(charge.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: chargeView.class === 'compensatable' || chargeView.class === 'irreversible',
      idempotentHint: true,
      openWorldHint: true,
    });
    expect(charge._meta).toMatchObject({ 'agent-saga/class': chargeView.class });
    expect(charge.inputSchema).toMatchObject({
      type: 'object',
      properties: chargeView.inputSchema.properties,
    });
    for (const view of harness) {
      const tool = byName.get(view.name)!;
      expect(tool.annotations?.destructiveHint).toBe(['compensatable', 'irreversible'].includes(view.class));
    }
    expect(byName.get('send_email')!.description).toContain('holds each call for a person’s approval');
  });

  it('refuses a request without a token, or with an unknown one, with 401 and a Bearer challenge', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(initialize),
      });
    const missing = await post({});
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await missing.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 }, id: null });

    const unknown = await post({ authorization: 'Bearer not-a-token' });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('www-authenticate')).toContain('invalid_token');

    // The official client surfaces it as a failed connect.
    await expect(connect('not-a-token')).rejects.toThrow(/401|unknown or revoked/);

    // A session is bound to its token: another valid token naming it is refused.
    const client = await connect();
    const other = await createApiToken(h.env.db, { tenantId: 'acme', role: 'agent', label: 'other' });
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const hijack = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${other}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    expect(hijack.status).toBe(403);
  });

  it('a charge whose answer is lost is UNKNOWN, not an error; the same call again settles it with one charge', async () => {
    const client = await connect();
    // The charge is made, its answer lost (a 504 after processing). Not `reset_after`: the Stripe client
    // replays a reset connection once by itself, with the same key, and reads the answer.
    h.sandbox.admin.addFault({ ...CHARGE_PATH, nth: 1, kind: 'error_after' });
    const { answers } = await callUntilSettled(client, CHARGE);

    const first = answers[0]!;
    expect(first.structuredContent).toMatchObject({ status: 'UNKNOWN', stepIdx: 0 });
    expect(first.isError).toBe(false);
    expect(String(first.structuredContent!.whatToDo)).toContain(
      'Call this tool again with the same arguments',
    );
    expect(JSON.parse((first.content[0] as { text: string }).text)).toEqual(first.structuredContent);
    // The call that settles it may be answered by its own lookup by key (a Stripe charge, whose vendor
    // dedupes by key, is looked up inline on the retry) or from the log, whichever came first; the same
    // call once more is answered from the log.
    const settled = answers.at(-1)!;
    expect(settled.structuredContent).toMatchObject({ status: 'CONFIRMED', stepIdx: 0 });
    const last = await call(client, CHARGE);
    answers.push(last);
    expect(last.structuredContent).toMatchObject({ status: 'CONFIRMED', stepIdx: 0, replayed: true });
    expect(last.structuredContent!.externalRef).toBe(settled.structuredContent!.externalRef);
    expect(last.isError).toBe(false);

    const runId = String(metaOf(first)['agent-saga/runId']);
    expect(runId).toMatch(/^mcp-/);
    const { run, ledger } = await ledgerOf(runId);
    expect(run.steps.map((s) => [s.tool, s.status])).toEqual([['charge_card', 'CONFIRMED']]);
    for (const a of answers)
      expect(metaOf(a)).toMatchObject({
        'agent-saga/runId': runId,
        'agent-saga/stepIdx': 0,
        'agent-saga/idempotencyKey': run.steps[0]!.idempotencyKey,
      });
    expect(ledger.charges).toHaveLength(1);
    expect(ledger.charges[0]!.id).toBe(last.structuredContent!.externalRef);
  }, 60_000);

  it('a call re-issued after its stream broke joins the first: same step and key, one charge', async () => {
    const client = await connect();
    // Why 1 200 ms: the first attempt is surely still at the vendor when the client gives up on it.
    h.sandbox.admin.addFault({ ...CHARGE_PATH, nth: 1, kind: 'delay', delayMs: 1_200 });
    const aborted = new AbortController();
    const first = call(client, CHARGE, { signal: aborted.signal });
    await new Promise((r) => setTimeout(r, 300));
    aborted.abort();
    await expect(first).rejects.toThrow();

    const again = await call(client, CHARGE);
    expect(again.structuredContent).toMatchObject({ status: 'CONFIRMED', stepIdx: 0 });
    const runId = String(metaOf(again)['agent-saga/runId']);
    const { run, ledger } = await ledgerOf(runId);
    expect(run.steps).toHaveLength(1);
    expect(metaOf(again)).toMatchObject({
      'agent-saga/stepIdx': 0,
      'agent-saga/idempotencyKey': run.steps[0]!.idempotencyKey,
    });
    expect(ledger.charges).toHaveLength(1);
    expect(ledger.charges[0]!.id).toBe(again.structuredContent!.externalRef);

    // Re-issued once more after the answer (as if that answer were lost too): the recorded outcome.
    const third = await call(client, CHARGE);
    expect(third.structuredContent).toMatchObject({
      status: 'CONFIRMED',
      stepIdx: 0,
      replayed: true,
      externalRef: again.structuredContent!.externalRef,
    });
    // The same operation in other words is a replanned duplicate: refused, an error the model acts on.
    const rephrased = await call(client, { ...CHARGE, reason: 'Refund for order 1182, again' });
    expect(rephrased.isError).toBe(true);
    expect(rephrased.structuredContent).toMatchObject({
      status: 'REFUSED',
      code: 'DUPLICATE_OPERATION',
      details: { stepIdx: 0, externalRef: again.structuredContent!.externalRef },
    });
    const after = await ledgerOf(runId);
    expect(after.run.steps).toHaveLength(1);
    expect(after.ledger.charges).toHaveLength(1);
  }, 60_000);

  it('a second session naming the run in _meta lands on its open step', async () => {
    const runId = 'mcp-named-run';
    const first = await connect();
    h.sandbox.admin.addFault({ ...CHARGE_PATH, nth: 1, kind: 'error_after' });
    const lost = await call(first, CHARGE, { runId });
    expect(lost.structuredContent).toMatchObject({ status: 'UNKNOWN', stepIdx: 0 });
    expect(metaOf(lost)['agent-saga/runId']).toBe(runId);
    await first.close();

    const second = await connect();
    const { answers } = await callUntilSettled(second, CHARGE, { runId });
    // The settling call may be the re-send under the same key (Stripe dedupes by key, so a lookup that does
    // not see the charge yet sends it again: `replayed: false`) or a read of the log; once more, the log.
    const settled = answers.at(-1)!;
    expect(settled.structuredContent).toMatchObject({ status: 'CONFIRMED', stepIdx: 0 });
    const again = await call(second, CHARGE, { runId });
    expect(again.structuredContent).toMatchObject({
      status: 'CONFIRMED',
      stepIdx: 0,
      replayed: true,
      externalRef: settled.structuredContent!.externalRef,
    });
    const { run, ledger } = await ledgerOf(runId);
    expect(run.steps.map((s) => s.stepIdx)).toEqual([0]);
    expect(metaOf(settled)).toMatchObject({
      'agent-saga/runId': runId,
      'agent-saga/idempotencyKey': run.steps[0]!.idempotencyKey,
    });
    expect(ledger.charges).toHaveLength(1);
    expect(ledger.charges[0]!.id).toBe(settled.structuredContent!.externalRef);
  }, 60_000);

  it('serves a local client over stdio; another process naming a run lands on its step', async () => {
    // A step the HTTP gateway left UNKNOWN: the stdio process has its own handles, so it reads the log
    // (by then the reconciler may have settled the step: the repeat then reads its recorded outcome).
    const runId = 'mcp-cross-process';
    h.sandbox.admin.addFault({ ...CHARGE_PATH, nth: 1, kind: 'error_after' });
    const lost = await call(await connect(), CHARGE, { runId });
    expect(lost.structuredContent).toMatchObject({ status: 'UNKNOWN', stepIdx: 0 });

    const client = new Client({ name: 'gateway-test-stdio', version: '1.0.0' });
    const env = gatewayEnv({ SAGA_TOKEN: h.token });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [...nodeArgsFor(BIN), '--stdio'],
        cwd: REPO_ROOT,
        env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
        stderr: 'pipe',
      }),
    );
    clients.push(client);
    const own = await call(client, CHARGE);
    expect(own.structuredContent).toMatchObject({ status: 'CONFIRMED', stepIdx: 0, replayed: false });
    const ownRun = String(metaOf(own)['agent-saga/runId']);
    expect(ownRun).toMatch(/^mcp-stdio-/);
    expect((await ledgerOf(ownRun)).ledger.charges).toHaveLength(1);

    const { answers } = await callUntilSettled(client, CHARGE, { runId });
    // Settled by the re-send under the same key (`replayed: false`) or read from the log; once more, the log.
    const settled = answers.at(-1)!;
    expect(settled.structuredContent).toMatchObject({ status: 'CONFIRMED', stepIdx: 0 });
    expect((await call(client, CHARGE, { runId })).structuredContent).toMatchObject({
      status: 'CONFIRMED',
      stepIdx: 0,
      replayed: true,
      externalRef: settled.structuredContent!.externalRef,
    });
    const { run, ledger } = await ledgerOf(runId);
    expect(run.steps).toHaveLength(1);
    expect(metaOf(settled)).toMatchObject({
      'agent-saga/runId': runId,
      'agent-saga/idempotencyKey': run.steps[0]!.idempotencyKey,
    });
    expect(ledger.charges).toHaveLength(1);
    await client.close();
  }, 60_000);

  it('refuses to start in front of an upstream MCP server with an unmapped tool; starts once all are mapped', async () => {
    const desk = await startMcpDesk();
    try {
      // The desk's `delete_all_tickets` is left out of the fixture's mapping on purpose.
      const lookup = { tool: 'find_ticket_by_key', keyArg: 'key', resultPath: 'tickets' };
      // Both at once: each start costs a process's boot.
      const [refused, mapped] = await Promise.all([
        spawnGateway({ SAGA_MCP_UPSTREAMS: writeDeskMapping(desk.url) }),
        spawnGateway({
          SAGA_MCP_UPSTREAMS: writeDeskMapping(desk.url, {
            tools: {
              desk_delete_all: {
                upstream: 'desk',
                tool: 'delete_all_tickets',
                class: 'irreversible',
                version: 1,
                lookup,
              },
            },
          }),
        }),
      ]);
      expect(await refused.exited).toBe(1);
      expect(refused.output()).toContain('upstream tool desk.delete_all_tickets has no mapping');
      expect(refused.output()).toMatch(/"level":50/); // logged at error level, and printed
      expect(refused.output()).toContain('mcp-gateway: upstream tool desk.delete_all_tickets');
      await ready(mapped);
      expect(await stop(mapped)).toBe(0);
    } finally {
      await desk.close();
    }
  }, 60_000);
});
