import {
  ClientError,
  classifyToolError,
  commitHorizonOf,
  createToolRegistry,
  OutcomeUnknownError,
  parseArgs,
  StepStatus,
  type AnyTool,
} from '@agent-saga/core';
import { startSandbox, type RunningSandbox } from '@agent-saga/sandbox';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createJiraTools,
  DEFAULT_JIRA_COMMIT_HORIZON_MS,
  jiraConfigFromEnv,
  sagaLabel,
  type JiraConfig,
} from '../src/index.js';
import {
  acceptsArgs,
  eventually,
  rejectionOf,
  sleep,
  stepContext,
  toolNamed,
} from './support/http-connector-kit.js';
import { effectOf } from './support/effect-of.js';

/** Short, so tests wait the lag out; the tools are told the same lag the sandbox's index has. */
const LAG_MS = 400;

let sandbox: RunningSandbox;
let tools: readonly AnyTool[];

function jiraConfig(extra: Record<string, string> = {}): JiraConfig {
  return jiraConfigFromEnv({
    JIRA_BASE_URL: sandbox.urls.jira,
    JIRA_EMAIL: sandbox.credentials.jiraEmail,
    JIRA_API_TOKEN: sandbox.credentials.jiraApiToken,
    JIRA_PROJECT_KEY: 'SUP',
    JIRA_LOOKUP_LAG_MS: String(LAG_MS),
    ...extra,
  });
}

const tool = (name: string) => toolNamed(tools, name);
const issues = () => sandbox.admin.ledger().jira.issues;
const call = (name: string, args: unknown, ctx = stepContext(name)) =>
  tool(name).execute(parseArgs(tool(name), args), ctx) as Promise<{
    externalRef: string;
    result: Record<string, unknown>;
  }>;

beforeAll(async () => {
  sandbox = await startSandbox({ settings: { jiraSearchLagMs: LAG_MS } });
  tools = createJiraTools(jiraConfig());
});
afterAll(async () => sandbox?.close());
beforeEach(() => sandbox.admin.reset());

describe('Jira connector against the sandbox', () => {
  it('registers with the core registry, with the configured lag, horizon and defaults', () => {
    const registry = createToolRegistry(tools);
    expect(
      registry
        .list()
        .map((t) => t.name)
        .sort(),
    ).toEqual(
      ['close_ticket', 'create_ticket', 'create_ticket_draft', 'delete_ticket', 'open_ticket'].sort(),
    );
    expect(tool('create_ticket').lookupLagMs).toBe(LAG_MS);
    expect(tool('close_ticket').lookupLagMs).toBe(LAG_MS);
    expect(jiraConfigFromEnv({ ...envOf(jiraConfig()), JIRA_LOOKUP_LAG_MS: undefined }).lookupLagMs).toBe(
      30_000,
    );
    // Jira may commit a create it held past the timeout: every tool declares the configured horizon.
    for (const t of tools) expect(commitHorizonOf(t), t.name).toBe(DEFAULT_JIRA_COMMIT_HORIZON_MS);
    expect(DEFAULT_JIRA_COMMIT_HORIZON_MS).toBeGreaterThan(tool('create_ticket').timeoutMs);
    const horizon = createJiraTools(jiraConfig({ JIRA_COMMIT_HORIZON_MS: '12500' }));
    expect(horizon.map((t) => t.commitHorizonMs)).toEqual(horizon.map(() => 12_500));
    expect(() => jiraConfig({ JIRA_COMMIT_HORIZON_MS: '-1' })).toThrow(/JIRA_COMMIT_HORIZON_MS/);
    expect(() => jiraConfig({ JIRA_COMMIT_HORIZON_MS: 'soon' })).toThrow(/JIRA_COMMIT_HORIZON_MS/);
    expect(tool('create_ticket').compensate?.({ summary: 's', orderId: '1' }, 'k1')).toEqual({
      tool: 'close_ticket',
      args: { ticket: { $ref: 'k1' }, reason: 'rolled back by run' },
    });
  });

  it('create_ticket: one issue in the project, labelled with the harness key', async () => {
    const ctx = stepContext('create_ticket');
    const effect = await call('create_ticket', { summary: 'Refund order 1182', orderId: '1182' }, ctx);
    expect(effect.externalRef).toMatch(/^SUP-\d+$/);
    expect(issues()).toEqual([
      expect.objectContaining({
        key: effect.externalRef,
        summary: 'Refund order 1182',
        status: 'To Do',
        labels: [`saga-${ctx.idempotencyKey}`],
      }),
    ]);
  });

  it('504 after commit: unknown, the issue exists, and lookup finds it once the index catches up', async () => {
    sandbox.admin.addFault({
      vendor: 'jira',
      method: 'POST',
      path: '/rest/api/3/issue',
      nth: 1,
      kind: 'error_after',
    });
    const ctx = stepContext('create_ticket');
    const err = await rejectionOf(
      call('create_ticket', { summary: 'Refund order 1182', orderId: '1182' }, ctx),
    );
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err).toMatchObject({ status: 504 });
    expect(classifyToolError(err).status).toBe(StepStatus.UNKNOWN);
    expect(issues()).toHaveLength(1);

    const found = await eventually(
      async () => effectOf(await tool('create_ticket').lookup!(ctx.idempotencyKey, ctx)),
      LAG_MS * 3,
    );
    expect(found).toMatchObject({ externalRef: issues()[0]!.key });
    expect(found?.duplicates).toBeUndefined();
  });

  it('no idempotency in Jira: a plain retry WOULD duplicate, which is why the harness looks up first', async () => {
    sandbox.admin.addFault({
      vendor: 'jira',
      method: 'POST',
      path: '/rest/api/3/issue',
      nth: 1,
      kind: 'error_after',
    });
    const ctx = stepContext('create_ticket');
    await rejectionOf(call('create_ticket', { summary: 'Refund order 1182', orderId: '1182' }, ctx));
    // A blind retry under the same key: Jira makes a second ticket.
    const second = await call('create_ticket', { summary: 'Order #1182 refund', orderId: '1182' }, ctx);
    expect(issues()).toHaveLength(2);
    expect(issues().every((i) => i.labels.includes(sagaLabel(ctx.idempotencyKey)))).toBe(true);
    // The lookup reports the first as the effect and the other as a duplicate-effect incident.
    await sleep(LAG_MS + 100);
    const found = await tool('create_ticket').lookup!(ctx.idempotencyKey, ctx);
    expect(found).toMatchObject({ externalRef: issues()[0]!.key, duplicates: [second.externalRef] });
  });

  it('the search lags: null within the lag, found after it (no absence taken from a lagging index)', async () => {
    const ctx = stepContext('create_ticket');
    const effect = await call('create_ticket', { summary: 'Refund order 1183', orderId: '1183' }, ctx);
    expect(await tool('create_ticket').lookup!(ctx.idempotencyKey, ctx)).toBeNull();
    await sleep(LAG_MS + 100);
    expect(await tool('create_ticket').lookup!(ctx.idempotencyKey, ctx)).toMatchObject({
      externalRef: effect.externalRef,
    });
    // The lookup uses the enhanced search, never the removed /rest/api/3/search.
    const paths = sandbox.admin.requests().map((r) => r.path);
    expect(paths).toContain('/rest/api/3/search/jql');
    expect(paths).not.toContain('/rest/api/3/search');
  });

  it('a definitive 400 (no such project) is a ClientError: FAILED, nothing created', async () => {
    const [createTicket] = createJiraTools(jiraConfig({ JIRA_PROJECT_KEY: 'NOPE' }));
    const err = await rejectionOf(
      createTicket!.execute({ summary: 'x', orderId: '1' }, stepContext('create_ticket')),
    );
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).details).toMatchObject({ status: 400, vendorCode: 'jira_field:project' });
    expect(classifyToolError(err).status).toBe(StepStatus.FAILED);
    expect(issues()).toEqual([]);
  });

  it('bad credentials are a ClientError (401) and the token never appears in the error', async () => {
    const [createTicket] = createJiraTools(jiraConfig({ JIRA_API_TOKEN: 'wrong-secret-token' }));
    const err = await rejectionOf(
      createTicket!.execute({ summary: 'x', orderId: '1' }, stepContext('create_ticket')),
    );
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).details.status).toBe(401);
    expect(JSON.stringify({ m: (err as Error).message, d: (err as ClientError).details })).not.toContain(
      'wrong-secret',
    );
  });

  it('draft → open → close: each keyed by its own label and found by its lookup', async () => {
    const draftCtx = stepContext('create_ticket_draft');
    const draft = await call('create_ticket_draft', { summary: 'Reship 1183', orderId: '1183' }, draftCtx);
    expect(issues()[0]).toMatchObject({ key: draft.externalRef, status: 'Draft' });

    const openCtx = stepContext('open_ticket');
    const opened = await call('open_ticket', { ticket: draft.externalRef }, openCtx);
    expect(opened.result).toMatchObject({ status: 'To Do', transitioned: true });
    expect(issues()[0]!.labels).toContain(sagaLabel(openCtx.idempotencyKey));
    expect(tool('open_ticket').compensate?.({ ticket: draft.externalRef }, openCtx.idempotencyKey)).toEqual({
      tool: 'close_ticket',
      args: { ticket: draft.externalRef, reason: 'rolled back by run' },
    });

    const closeCtx = stepContext('close_ticket');
    const closed = await call(
      'close_ticket',
      { ticket: draft.externalRef, reason: 'rolled back by run' },
      closeCtx,
    );
    expect(closed.result).toMatchObject({ status: 'Done', transitioned: true });
    const issue = issues()[0]!;
    expect(issue).toMatchObject({ status: 'Done', statusCategory: 'done' });
    expect(issue.comments.map((c) => c.text)).toEqual([expect.stringContaining('rolled back by run')]);

    await sleep(LAG_MS + 100);
    expect(await tool('create_ticket_draft').lookup!(draftCtx.idempotencyKey, draftCtx)).toMatchObject({
      externalRef: draft.externalRef,
    });
    expect(await tool('open_ticket').lookup!(openCtx.idempotencyKey, openCtx)).toMatchObject({
      externalRef: draft.externalRef,
    });
    expect(await tool('close_ticket').lookup!(closeCtx.idempotencyKey, closeCtx)).toMatchObject({
      externalRef: draft.externalRef,
      result: { status: 'Done' },
    });
  });

  it('close_ticket on a ticket already done is a no-op: no transition, no comment', async () => {
    const created = await call('create_ticket', { summary: 'Refund 1182', orderId: '1182' });
    const first = stepContext('close_ticket');
    await call('close_ticket', { ticket: created.externalRef, reason: 'solved' }, first);
    sandbox.admin.clearRequests();

    // A re-send of the same step (after a lost answer), and another step closing it again.
    for (const ctx of [first, stepContext('close_ticket')]) {
      const again = await call('close_ticket', { ticket: created.externalRef, reason: 'again' }, ctx);
      expect(again.result).toMatchObject({ status: 'Done', transitioned: false });
    }
    const transitions = sandbox.admin
      .requests()
      .filter((r) => r.method === 'POST' && r.path.endsWith('/transitions'));
    expect(transitions).toEqual([]);
    expect(issues()[0]!.comments).toHaveLength(1);
  });

  it('close_ticket whose transition answer was lost: unknown, then a re-send finishes with one comment', async () => {
    const created = await call('create_ticket', { summary: 'Refund 1182', orderId: '1182' });
    sandbox.admin.addFault({
      vendor: 'jira',
      method: 'POST',
      path: '/rest/api/3/issue/:key/transitions',
      nth: 1,
      kind: 'error_after',
    });
    const ctx = stepContext('close_ticket');
    const err = await rejectionOf(
      call('close_ticket', { ticket: created.externalRef, reason: 'rolled back' }, ctx),
    );
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    await sleep(LAG_MS + 100);
    expect(await tool('close_ticket').lookup!(ctx.idempotencyKey, ctx)).toMatchObject({
      externalRef: created.externalRef,
    });
    await call('close_ticket', { ticket: created.externalRef, reason: 'rolled back' }, ctx);
    expect(issues()[0]!.comments).toHaveLength(1);
  });

  it('close_ticket called as a compensation says in its comment why the run was unwound', async () => {
    const created = await call('create_ticket', { summary: 'Refund 1182', orderId: '1182' });
    const ctx = { ...stepContext('close_ticket'), unwindReason: 'the warehouse refused the reship' };
    await call('close_ticket', { ticket: created.externalRef, reason: 'rolled back by run' }, ctx);
    expect(issues()[0]!.comments.map((c) => c.text)).toEqual([
      `rolled back by run\nUnwind reason: the warehouse refused the reship\n(agent-saga step ${ctx.idempotencyKey})`,
    ]);
  });

  it('create_ticket precondition: open → as left; closed by a person → already compensated; else changed', async () => {
    const precondition = tool('create_ticket').precondition!;
    const check = async (ticket: string) =>
      precondition({ externalRef: ticket, result: {} }, stepContext('create_ticket'));
    const [open, closed, started, deleted] = await Promise.all(
      [1, 2, 3, 4].map((n) => call('create_ticket', { summary: `Refund ${n}`, orderId: String(n) })),
    );
    await personTransitions(closed!.externalRef, '31');
    await personTransitions(started!.externalRef, '21');
    await call('delete_ticket', { ticket: deleted!.externalRef }, stepContext('delete_ticket'));
    sandbox.admin.clearRequests();

    expect(await check(open!.externalRef)).toBe('as_left');
    expect(await check(closed!.externalRef)).toBe('already_compensated');
    expect(await check(started!.externalRef)).toEqual({
      changed: expect.stringContaining('In Progress') as unknown,
    });
    expect(await check(deleted!.externalRef)).toEqual({
      changed: expect.stringContaining('no longer exists') as unknown,
    });
    // It only reads, live (never the lagging index).
    expect(sandbox.admin.requests().map((r) => `${r.method} ${r.path}`)).toEqual(
      [open, closed, started, deleted].map((t) => `GET /rest/api/3/issue/${t!.externalRef}`),
    );
  });

  it('open_ticket refuses a ticket that is not a draft, before changing anything', async () => {
    const created = await call('create_ticket', { summary: 'Refund 1182', orderId: '1182' });
    await call('close_ticket', { ticket: created.externalRef, reason: 'done' });
    const ctx = stepContext('open_ticket');
    const err = await rejectionOf(call('open_ticket', { ticket: created.externalRef }, ctx));
    expect(err).toBeInstanceOf(ClientError);
    expect(issues()[0]!.labels).not.toContain(sagaLabel(ctx.idempotencyKey));
  });

  it('delete_ticket (the draft compensation) deletes, and a re-send converges on "already gone"', async () => {
    const draft = await call('create_ticket_draft', { summary: 'Reship 1183', orderId: '1183' });
    const ctx = stepContext('delete_ticket', { args: { ticket: draft.externalRef } });
    // The lookup checks the state the call was meant to reach: the ticket still exists, so not yet.
    expect(await tool('delete_ticket').lookup!(ctx.idempotencyKey, ctx)).toBeNull();
    expect((await call('delete_ticket', { ticket: draft.externalRef }, ctx)).result).toMatchObject({
      deleted: true,
      alreadyGone: false,
    });
    expect(issues()).toEqual([]);
    expect((await call('delete_ticket', { ticket: draft.externalRef }, ctx)).result).toMatchObject({
      alreadyGone: true,
    });
    expect(await tool('delete_ticket').lookup!(ctx.idempotencyKey, ctx)).toMatchObject({
      externalRef: draft.externalRef,
      result: { deleted: true },
    });
  });

  it('ticket arguments are issue keys; a model cannot pass anything else', () => {
    expect(acceptsArgs(tool('close_ticket'), { ticket: 'SUP-12', reason: 'x' })).toBe(true);
    expect(acceptsArgs(tool('close_ticket'), { ticket: 'sup 12', reason: 'x' })).toBe(false);
  });
});

function envOf(config: JiraConfig): Record<string, string> {
  return {
    JIRA_BASE_URL: config.baseUrl,
    JIRA_EMAIL: config.email,
    JIRA_API_TOKEN: config.apiToken,
    JIRA_PROJECT_KEY: config.projectKey,
  };
}

/** A person moving a ticket in Jira directly (global transitions: 21 → In Progress, 31 → Done). */
async function personTransitions(ticket: string, transitionId: '21' | '31'): Promise<void> {
  const c = sandbox.credentials;
  const r = await fetch(`${sandbox.urls.jira}/rest/api/3/issue/${ticket}/transitions`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${c.jiraEmail}:${c.jiraApiToken}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ transition: { id: transitionId } }),
  });
  expect(r.status).toBe(204);
}
