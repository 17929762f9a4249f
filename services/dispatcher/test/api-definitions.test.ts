/**
 * `GET /v1/definitions` and `GET /v1/tools` over HTTP, with the support agent's real tool module loaded as the api process
 * loads it (`loadToolModule(SAGA_TOOLS)`): both built-in definitions, their steps and tool classes, for an
 * agent and an operator token; the route in the OpenAPI document; `listDefinitions()` of the client.
 */
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSagaClient } from '@agent-saga/client';
import {
  bullmqConnection,
  createApiToken,
  createLogger,
  loadToolModule,
  type ExecuteJob,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { buildApi, type ApiApp } from '../src/api/build-api.js';
import { loadDispatcherConfig } from '../src/config.js';
import { createExecuteQueue } from '../src/queue/execute-queue.js';
import { OFFLINE_CONNECTOR_ENV, SUPPORT_AGENT_TOOLS } from './bound-runs-harness.js';

let env: TestEnv;
let app: ApiApp;
let queue: Queue<ExecuteJob>;
let url: string;
let agentToken: string;
let operatorToken: string;

beforeAll(async () => {
  env = await createTestEnv('api_definitions');
  Object.assign(process.env, OFFLINE_CONNECTOR_ENV, { DATABASE_URL: env.databaseUrl });
  const { tools, definitions } = await loadToolModule(SUPPORT_AGENT_TOOLS);
  const config = loadDispatcherConfig({
    ...env.env,
    SAGA_TOOLS: SUPPORT_AGENT_TOOLS,
    SAGA_FAST_PATH: 'false',
    LOG_LEVEL: 'silent',
  });
  queue = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
  ({ app } = await buildApi({
    db: env.db,
    schema: env.schema,
    registry: tools,
    definitions,
    queue,
    config,
    logger: createLogger({ level: 'silent', name: 'api-definitions-test' }),
  }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  agentToken = await createApiToken(env.db, { tenantId: 't1', role: 'agent' });
  operatorToken = await createApiToken(env.db, { tenantId: 't1', role: 'operator', label: 'alice' });
});

afterAll(async () => {
  await app?.close();
  await queue?.obliterate({ force: true }).catch(() => undefined);
  await queue?.close();
  await env?.close();
});

const list = (token: string | null) =>
  app.inject({ url: '/v1/definitions', headers: token ? { authorization: `Bearer ${token}` } : {} });

const step = (id: string, toolClass: string, dependsOn: string[], pivot = false) => ({
  id,
  tool: id,
  toolClass,
  dependsOn,
  pivot,
  repeatable: false,
});

describe('GET /v1/definitions', () => {
  it('lists both built-in definitions with their steps, tool classes and pivot, to an agent token', async () => {
    const res = await list(agentToken);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      definitions: [
        {
          name: 'refund_and_reship',
          version: 1,
          steps: [
            step('get_order', 'pure', []),
            step('create_ticket', 'compensatable', ['get_order']),
            step('charge_card', 'compensatable', ['get_order', 'create_ticket']),
            step('reship', 'compensatable', ['get_order', 'create_ticket', 'charge_card']),
          ],
        },
        {
          name: 'refund_and_reship_pivot',
          version: 1,
          steps: [
            step('get_order', 'pure', []),
            step('create_email_draft', 'reversible', ['get_order']),
            step('create_ticket_draft', 'reversible', ['get_order', 'create_email_draft']),
            step('authorize_payment', 'compensatable', [
              'get_order',
              'create_email_draft',
              'create_ticket_draft',
            ]),
            step(
              'capture_payment',
              'compensatable',
              ['get_order', 'create_email_draft', 'create_ticket_draft', 'authorize_payment'],
              true,
            ),
            step('open_ticket', 'compensatable', [
              'get_order',
              'create_email_draft',
              'create_ticket_draft',
              'authorize_payment',
              'capture_payment',
            ]),
            step('send_email', 'irreversible', [
              'get_order',
              'create_email_draft',
              'create_ticket_draft',
              'authorize_payment',
              'capture_payment',
              'open_ticket',
            ]),
          ],
        },
      ],
    });
  });

  it('answers an operator token the same, and refuses a request without a token', async () => {
    const [asAgent, asOperator, anonymous] = await Promise.all([
      list(agentToken),
      list(operatorToken),
      list(null),
    ]);
    expect(asOperator.statusCode).toBe(200);
    expect(asOperator.json()).toEqual(asAgent.json());
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
  });

  it('is in the OpenAPI document with its answer schema', async () => {
    const doc = (await app.inject({ url: '/docs/json' })).json<{
      paths: Record<string, { get?: { responses: Record<string, { content: unknown }> } }>;
    }>();
    const answer = JSON.stringify(doc.paths['/v1/definitions']?.get?.responses['200']?.content);
    for (const field of ['definitions', 'toolClass', 'dependsOn', 'pivot', 'repeatable', 'irreversible'])
      expect(answer).toContain(field);
  });

  it("is what the client's listDefinitions() reads", async () => {
    const client = createSagaClient({ baseUrl: url, token: agentToken });
    const definitions = await client.listDefinitions();
    expect(definitions.map((d) => `${d.name}@${d.version}`)).toEqual([
      'refund_and_reship@1',
      'refund_and_reship_pivot@1',
    ]);
    const pivot = definitions[1]!.steps.find((s) => s.pivot);
    expect(pivot?.tool).toBe('capture_payment');
  });
});

describe('GET /v1/tools', () => {
  const listTools = (token: string | null) =>
    app.inject({ url: '/v1/tools', headers: token ? { authorization: `Bearer ${token}` } : {} });
  type Listed = {
    name: string;
    description: string | null;
    class: string;
    inputSchema: Record<string, unknown>;
    identity: string[];
    audience: string[] | null;
    needsApproval: boolean;
    movesMoney: boolean;
    deletes: boolean;
    compensated: boolean;
  };
  const toolsOf = async (token: string) => (await listTools(token)).json<{ tools: Listed[] }>().tools;

  it('lists every registered tool by name, each with its class, description and what the harness does with a call', async () => {
    const tools = await toolsOf(agentToken);
    const { tools: registry } = await loadToolModule(SUPPORT_AGENT_TOOLS);
    expect(tools.map((t) => t.name)).toEqual(
      registry
        .list()
        .map((t) => t.name)
        .sort(),
    );
    for (const t of tools) expect(t.description, t.name).toMatch(/\w{3,}/);
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('charge_card')).toMatchObject({
      class: 'compensatable',
      identity: ['customerId', 'amount', 'currency'],
      audience: null, // the customer hears of it only with a receipt e-mail: a function of the arguments
      needsApproval: false,
      movesMoney: true,
      deletes: false,
      compensated: true,
    });
    expect(byName.get('send_email')).toMatchObject({ class: 'irreversible', needsApproval: true });
    expect(byName.get('delete_ticket')).toMatchObject({ deletes: true, needsApproval: true });
    expect(byName.get('get_order')).toMatchObject({ class: 'pure', movesMoney: false, compensated: false });
    expect(byName.get('capture_payment')).toMatchObject({ audience: ['finance'], movesMoney: true });
  });

  it("gives input schemas that accept and refuse what the harness's own parse does", async () => {
    const tools = await toolsOf(agentToken);
    const { tools: registry } = await loadToolModule(SUPPORT_AGENT_TOOLS);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajvFormats.default(ajv);
    const samples: [string, Record<string, unknown>][] = [
      ['charge_card', { customerId: 'cus_1', amount: 1299, currency: 'usd', reason: 'replacement' }],
      ['charge_card', { customerId: 'cus_1', amount: -5, currency: 'usd', reason: 'replacement' }],
      ['charge_card', { customerId: 'cus_1', amount: 12.5, currency: 'usd', reason: 'replacement' }],
      ['charge_card', { customerId: 'acct_1', amount: 100, currency: 'usd', reason: 'x' }],
      ['charge_card', { amount: 100, currency: 'usd', reason: 'x' }],
      [
        'charge_card',
        { customerId: 'cus_1', amount: 100, currency: 'usd', reason: 'x', receiptEmail: 'nope' },
      ],
      ['refund', { payment: 'pi_123' }],
      ['refund', { payment: 'ch_123' }],
      ['get_order', { orderId: '1182' }],
      ['get_order', {}],
    ];
    let accepted = 0;
    for (const [name, args] of samples) {
      const schema = tools.find((t) => t.name === name)!.inputSchema;
      expect(schema.type, name).toBe('object');
      const byJsonSchema = ajv.validate(schema, args);
      const parser = registry.require(name).args as { safeParse(v: unknown): { success: boolean } };
      const byHarness = parser.safeParse(args).success;
      expect(byJsonSchema, `${name} ${JSON.stringify(args)}`).toBe(byHarness);
      if (byHarness) accepted++;
    }
    // Both verdicts occur, so the agreement above compared something.
    expect(accepted).toBeGreaterThan(0);
    expect(accepted).toBeLessThan(samples.length);
  });

  it('answers an operator token the same, refuses a request without a token, and is in the OpenAPI document', async () => {
    const [asAgent, asOperator, anonymous] = await Promise.all([
      listTools(agentToken),
      listTools(operatorToken),
      listTools(null),
    ]);
    expect(asAgent.statusCode).toBe(200);
    expect(asOperator.json()).toEqual(asAgent.json());
    expect(anonymous.statusCode).toBe(401);
    const doc = (await app.inject({ url: '/docs/json' })).json<{
      paths: Record<string, { get?: { responses: Record<string, { content: unknown }> } }>;
    }>();
    const answer = JSON.stringify(doc.paths['/v1/tools']?.get?.responses['200']?.content);
    for (const field of ['inputSchema', 'identity', 'needsApproval', 'movesMoney', 'audience'])
      expect(answer).toContain(field);
  });

  it("is what the client's listTools() reads", async () => {
    const client = createSagaClient({ baseUrl: url, token: agentToken });
    const tools = await client.listTools();
    expect(tools).toEqual((await listTools(agentToken)).json<{ tools: unknown[] }>().tools);
  });
});
