/**
 * `GET /v1/definitions` over HTTP, with the support agent's real tool module loaded as the api process
 * loads it (`loadToolModule(SAGA_TOOLS)`): both built-in definitions, their steps and tool classes, for an
 * agent and an operator token; the route in the OpenAPI document; `listDefinitions()` of the client.
 */
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
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

const SUPPORT_AGENT_TOOLS = fileURLToPath(
  new URL('../../../packages/connectors/src/support-agent-tools.ts', import.meta.url),
);

/** What the connectors read at import; nothing is called, so no vendor needs to answer. */
const CONNECTOR_ENV = {
  STRIPE_SECRET_KEY: 'sk_test_definitions',
  STRIPE_API_BASE: 'http://127.0.0.1:9',
  JIRA_BASE_URL: 'http://127.0.0.1:9',
  JIRA_EMAIL: 'agent@example.com',
  JIRA_API_TOKEN: 'jira-token',
  JIRA_PROJECT_KEY: 'SUP',
  EMAIL_API_BASE: 'http://127.0.0.1:9',
  EMAIL_API_KEY: 'email-key',
  EMAIL_FROM: 'support@example.com',
  SHIPPING_API_BASE: 'http://127.0.0.1:9',
  SHIPPING_API_KEY: 'shipping-key',
};

let env: TestEnv;
let app: ApiApp;
let queue: Queue<ExecuteJob>;
let url: string;
let agentToken: string;
let operatorToken: string;

beforeAll(async () => {
  env = await createTestEnv('api_definitions');
  Object.assign(process.env, CONNECTOR_ENV, { DATABASE_URL: env.databaseUrl });
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
