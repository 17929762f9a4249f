/**
 * The dispatcher API in-process with the support agent's real tool module and its saga definitions, loaded
 * as the api process loads them (`loadToolModule(SAGA_TOOLS)`), for the tests of bound runs, plans and
 * budgets. Nothing is executed: the vendors point nowhere, and the tests read what the intake wrote (or did
 * not write) from the saga log. An agent and an operator token of tenant `t1`, an agent token of `t2`.
 */
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Queue } from 'bullmq';
import {
  bullmqConnection,
  createApiToken,
  createLogger,
  createSagaRegistry,
  loadToolModule,
  type SagaSpec,
  type ExecuteJob,
  type ToolModule,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { buildApi, type ApiApp } from '../src/api/build-api.js';
import type { ApiMetrics } from '../src/metrics/api-metrics.js';
import { loadDispatcherConfig } from '../src/config.js';
import { createExecuteQueue } from '../src/queue/execute-queue.js';

export const SUPPORT_AGENT_TOOLS = fileURLToPath(
  new URL('../../../packages/connectors/src/support-agent-tools.ts', import.meta.url),
);

/**
 * What the connectors read at import, for tests that load the support tools in process and call no vendor
 * (every base URL is a closed port).
 */
export const OFFLINE_CONNECTOR_ENV: Readonly<Record<string, string>> = {
  STRIPE_SECRET_KEY: 'sk_test_offline',
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

export interface BoundRunsHarness {
  readonly env: TestEnv;
  readonly app: ApiApp;
  /** The API's metrics (served by `bin/api.ts` on the role's own listener, not on the app's port). */
  readonly metrics: ApiMetrics;
  readonly module: ToolModule;
  readonly url: string;
  readonly token: { readonly agent: string; readonly operator: string; readonly other: string };
  request(
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
    token?: string,
  ): Promise<{ status: number; body: Record<string, unknown> & { error?: Record<string, unknown> } }>;
  /** Rows of the run in the saga log, the outbox and the step events (the run's own events left out). */
  written(runId: string): Promise<{ steps: number; outbox: number; events: number; approvals: number }>;
  close(): Promise<void>;
}

/** `extraDefinitions`: registered with the module's own (a test's definition the connectors do not ship). */
export async function startBoundRunsHarness(
  label: string,
  extraDefinitions: readonly SagaSpec[] = [],
): Promise<BoundRunsHarness> {
  const env = await createTestEnv(label);
  Object.assign(process.env, OFFLINE_CONNECTOR_ENV, { DATABASE_URL: env.databaseUrl });
  const loaded = await loadToolModule(SUPPORT_AGENT_TOOLS);
  const module: ToolModule = {
    ...loaded,
    definitions: createSagaRegistry(loaded.tools, [...loaded.definitions.list(), ...extraDefinitions]),
  };
  const config = loadDispatcherConfig({
    ...env.env,
    SAGA_TOOLS: SUPPORT_AGENT_TOOLS,
    SAGA_FAST_PATH: 'false',
    CALL_WAIT_DEFAULT_MS: '1',
    LOG_LEVEL: 'silent',
  });
  const queue: Queue<ExecuteJob> = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
  const { app, metrics } = await buildApi({
    db: env.db,
    schema: env.schema,
    registry: module.tools,
    definitions: module.definitions,
    queue,
    config,
    logger: createLogger({ level: 'silent', name: `api-test-${label}` }),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const token = {
    agent: await createApiToken(env.db, { tenantId: 't1', role: 'agent' }),
    operator: await createApiToken(env.db, { tenantId: 't1', role: 'operator', label: 'alice' }),
    other: await createApiToken(env.db, { tenantId: 't2', role: 'agent' }),
  };
  const count = async (table: 'saga_log' | 'outbox' | 'step_events' | 'approvals', runId: string) => {
    let q = env.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('run_id', '=', runId);
    if (table === 'step_events') q = q.where('step_idx', 'is not', null);
    return Number((await q.executeTakeFirstOrThrow()).n);
  };
  return {
    env,
    app,
    metrics,
    module,
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    token,
    async request(method, url, body, as = token.agent) {
      const res = await app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${as}` },
        ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
      });
      return { status: res.statusCode, body: res.json() };
    },
    async written(runId) {
      const [steps, outbox, events, approvals] = await Promise.all([
        count('saga_log', runId),
        count('outbox', runId),
        count('step_events', runId),
        count('approvals', runId),
      ]);
      return { steps, outbox, events, approvals };
    },
    async close() {
      await app.close();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await env.close();
    },
  };
}
