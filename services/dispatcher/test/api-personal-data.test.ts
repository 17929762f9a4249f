/**
 * Who sees a step's personal data over the API: an agent token reads `[PERSONAL]` for the fields its tool
 * declares `personal` (arguments, the compensation's arguments) and `personalResult` (the result), in the
 * run view and the events; an operator token reads the values; a `secret` argument is `[REDACTED]` for
 * both, and its value appears in no answer at all. Real Postgres and Redis, the API in process, the step
 * played to CONFIRMED the way the executor records it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { z } from 'zod';
import { argsContain } from '@agent-saga/client';
import {
  ApprovalKind,
  bullmqConnection,
  createApiToken,
  createApproval,
  stepKey,
  createLogger,
  createToolRegistry,
  defineTool,
  PERSONAL_MARK,
  SECRET_MARK,
  StepStatus,
  transitionStep,
  type ExecuteJob,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import type { Queue } from 'bullmq';
import { buildApi, type ApiApp } from '../src/api/build-api.js';
import { loadDispatcherConfig } from '../src/config.js';
import { createExecuteQueue } from '../src/queue/execute-queue.js';

const EMAIL = 'grace.hopper@example.com';
const LINE1 = '7 Cobol Lane';
const API_TOKEN = 'sk_live_never_shown_42';

const notifyCustomer = defineTool({
  name: 'notify_customer',
  class: 'compensatable',
  version: 1,
  args: z.object({
    email: z.email(),
    address: z.object({ line1: z.string(), city: z.string() }),
    orderId: z.string(),
    apiToken: z.string(),
  }),
  personal: ['email', 'address.line1'],
  personalResult: ['recipient'],
  secret: ['apiToken'],
  compensate: (args) => ({
    tool: 'retract_notice',
    args: { email: args.email, note: `sent to ${args.address.line1} by mistake` },
  }),
  execute: () => Promise.reject(new Error('played by the test')),
  lookup: () => Promise.resolve(null),
});
const retractNotice = defineTool({
  name: 'retract_notice',
  class: 'irreversible',
  version: 1,
  args: z.object({ email: z.email(), note: z.string() }),
  personal: ['email'],
  execute: () => Promise.reject(new Error('never sent here')),
  lookup: () => Promise.resolve(null),
});

let env: TestEnv;
let app: ApiApp;
let queue: Queue<ExecuteJob>;
let agent: string;
let operator: string;
const runId = 'order-77';

async function get(url: string, token: string): Promise<Record<string, unknown>> {
  const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
  expect(res.statusCode).toBe(200);
  return res.json();
}

beforeAll(async () => {
  env = await createTestEnv('api-personal-data');
  const config = loadDispatcherConfig({
    ...env.env,
    SAGA_TOOLS: 'test/fixtures/effect-tools.ts',
    SAGA_FAST_PATH: 'false',
    CALL_WAIT_DEFAULT_MS: '1',
    LOG_LEVEL: 'silent',
  });
  queue = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
  ({ app } = await buildApi({
    db: env.db,
    schema: env.schema,
    registry: createToolRegistry([notifyCustomer, retractNotice]),
    queue,
    config,
    logger: createLogger({ level: 'silent', name: 'api-personal-data' }),
  }));
  await app.ready();
  agent = await createApiToken(env.db, { tenantId: 't1', role: 'agent' });
  operator = await createApiToken(env.db, { tenantId: 't1', role: 'operator' });

  const created = await app.inject({
    method: 'POST',
    url: '/v1/runs',
    headers: { authorization: `Bearer ${agent}` },
    payload: { runId },
  });
  expect(created.statusCode).toBe(201);
  const called = await app.inject({
    method: 'POST',
    url: `/v1/runs/${runId}/calls`,
    headers: { authorization: `Bearer ${agent}` },
    payload: {
      tool: 'notify_customer',
      args: {
        email: EMAIL,
        address: { line1: LINE1, city: 'Arlington' },
        orderId: 'o-77',
        apiToken: API_TOKEN,
      },
    },
  });
  expect(called.statusCode).toBe(202);
  // The executor's record of the effect: claimed under a lease, then CONFIRMED with the tool's result.
  await sql`UPDATE saga_log SET attempts = attempts + 1, lease_owner = 'test-executor',
                   lease_until = now() + interval '30 seconds', last_attempt_at = now()
             WHERE run_id = ${runId} AND step_idx = 0 AND status = 'INTENDED'`.execute(env.db);
  await env.db.transaction().execute((trx) =>
    transitionStep(trx, {
      runId,
      stepIdx: 0,
      to: StepStatus.CONFIRMED,
      cause: 'test executor',
      leaseOwner: 'test-executor',
      schema: env.schema,
      patch: {
        external_ref: 'N-1',
        result: JSON.stringify({ noticeId: 'N-1', recipient: EMAIL }),
        lease_until: null,
        lease_owner: null,
      },
    }),
  );
});

afterAll(async () => {
  await app?.close();
  await queue?.obliterate({ force: true }).catch(() => undefined);
  await queue?.close();
  await env?.close();
});

interface StepShown {
  readonly status: string;
  readonly args: Record<string, unknown>;
  readonly result: Record<string, unknown>;
  readonly compensation: { readonly tool: string; readonly args: Record<string, unknown> };
}
const firstStep = (view: Record<string, unknown>) => (view.steps as StepShown[])[0]!;

describe('personal data in the run view and the events', () => {
  it('shows an agent token [PERSONAL] in args, compensation args and result, and hides the secret', async () => {
    const view = await get(`/v1/runs/${runId}`, agent);
    const step = firstStep(view);
    expect(step.status).toBe('CONFIRMED');
    expect(step.args).toEqual({
      email: PERSONAL_MARK,
      address: { line1: PERSONAL_MARK, city: 'Arlington' },
      orderId: 'o-77',
      apiToken: SECRET_MARK,
    });
    expect(step.compensation.tool).toBe('retract_notice');
    expect(step.compensation.args).toEqual({
      email: PERSONAL_MARK,
      note: `sent to ${PERSONAL_MARK} by mistake`,
    });
    expect(step.result).toEqual({ noticeId: 'N-1', recipient: PERSONAL_MARK });
    const text = JSON.stringify(view);
    expect(text).not.toContain(EMAIL);
    expect(text).not.toContain(LINE1);
    expect(text).not.toContain(API_TOKEN);
  });

  it("shows an agent token the intake event's arguments redacted, and no value anywhere in the events", async () => {
    const page = await get(`/v1/runs/${runId}/events`, agent);
    const events = page.events as { kind: string; detail: Record<string, unknown> | null }[];
    const withArgs = events.filter((e) => e.detail && 'args' in e.detail);
    expect(withArgs.length).toBeGreaterThan(0);
    for (const e of withArgs)
      expect(e.detail!.args).toMatchObject({
        email: PERSONAL_MARK,
        address: { line1: PERSONAL_MARK },
        apiToken: SECRET_MARK,
      });
    const text = JSON.stringify(page);
    expect(text).not.toContain(EMAIL);
    expect(text).not.toContain(LINE1);
    expect(text).not.toContain(API_TOKEN);
  });

  it('shows an operator token the personal values, and still not the secret', async () => {
    const view = await get(`/v1/runs/${runId}`, operator);
    const step = firstStep(view);
    expect(step.args).toEqual({
      email: EMAIL,
      address: { line1: LINE1, city: 'Arlington' },
      orderId: 'o-77',
      apiToken: SECRET_MARK,
    });
    expect(step.compensation.args).toEqual({ email: EMAIL, note: `sent to ${LINE1} by mistake` });
    expect(step.result).toEqual({ noticeId: 'N-1', recipient: EMAIL });
    const page = await get(`/v1/runs/${runId}/events`, operator);
    expect(JSON.stringify(page)).toContain(EMAIL);
    expect(JSON.stringify(view)).not.toContain(API_TOKEN);
    expect(JSON.stringify(page)).not.toContain(API_TOKEN);
  });

  it("redacts a case's evidence: the secret for the operator queue, the personal values too for agents", async () => {
    await env.db
      .insertInto('cases')
      .values({
        run_id: runId,
        step_idx: 0,
        tenant_id: 't1',
        reason: 'the courier answered oddly',
        evidence: JSON.stringify({
          lookups: [{ answer: `notice for ${EMAIL} at ${LINE1} sent with ${API_TOKEN}` }],
        }),
        status: 'open',
      })
      .execute();
    const queue = await get('/v1/cases?status=open', operator);
    const item = (queue.cases as { runId: string; evidence: { lookups: { answer: string }[] } }[]).find(
      (c) => c.runId === runId,
    )!;
    expect(item.evidence.lookups[0]!.answer).toBe(`notice for ${EMAIL} at ${LINE1} sent with ${SECRET_MARK}`);
    const view = await get(`/v1/runs/${runId}`, agent);
    const seen = (view.cases as { evidence: { lookups: { answer: string }[] } }[])[0]!;
    expect(seen.evidence.lookups[0]!.answer).toBe(
      `notice for ${PERSONAL_MARK} at ${PERSONAL_MARK} sent with ${SECRET_MARK}`,
    );
  });

  it("redacts a held step's approval in the agent's run view, and the agent's bridge still finds it", async () => {
    const args = {
      email: EMAIL,
      address: { line1: LINE1, city: 'Arlington' },
      orderId: 'o-77',
      apiToken: API_TOKEN,
    };
    const approval = await env.db.transaction().execute((trx) =>
      createApproval(trx, {
        tenantId: 't1',
        runId,
        kind: ApprovalKind.STEP,
        steps: [
          {
            stepIdx: 0,
            tool: 'notify_customer',
            toolVersion: 1,
            key: stepKey(runId, 0, 'notify_customer'),
            args,
          },
        ],
        summary: `notify ${EMAIL} at ${LINE1}`,
        evidence: {},
        expiresAt: new Date(Date.now() + 3600_000),
      }),
    );
    type Held = { id: string; summary: string; steps: { args: Record<string, unknown> }[] };
    const held = (view: Record<string, unknown>) =>
      (view.approvals as Held[]).find((a) => a.id === approval.id)!;

    const agentSees = held(await get(`/v1/runs/${runId}`, agent));
    expect(agentSees.steps[0]!.args).toMatchObject({
      email: PERSONAL_MARK,
      address: { line1: PERSONAL_MARK, city: 'Arlington' },
      orderId: 'o-77',
      apiToken: SECRET_MARK,
    });
    expect(agentSees.summary).toBe(`notify ${PERSONAL_MARK} at ${PERSONAL_MARK}`);
    expect(JSON.stringify(agentSees)).not.toContain(EMAIL);
    // The framework bridges find a held call by its tool and arguments: the redacted fields match any value,
    // the others still have to agree.
    const { apiToken: _t, ...given } = args;
    expect(argsContain(agentSees.steps[0]!.args, given)).toBe(true);
    expect(argsContain(agentSees.steps[0]!.args, { ...given, orderId: 'o-78' })).toBe(false);

    // The operator's queue shows the values (not the secret).
    const queued = (await get(`/v1/approvals/${approval.id}`, operator)) as unknown as Held;
    expect(queued.steps[0]!.args).toMatchObject({ email: EMAIL, apiToken: SECRET_MARK });
    expect(queued.summary).toBe(`notify ${EMAIL} at ${LINE1}`);
  });

  it('stores the values as given: redaction is what a reader sees, not what executes', async () => {
    const row = await env.db
      .selectFrom('saga_log')
      .select(['args', 'result'])
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(row.args).toMatchObject({ email: EMAIL, apiToken: API_TOKEN });
    expect(row.result).toMatchObject({ recipient: EMAIL });
  });
});
