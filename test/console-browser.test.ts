/**
 * The operator's web console in a real browser (Debian's chromium, driven by playwright-core) against the
 * real roles: api, relay, executor and reconciler as processes, the fixture tools counting real effects.
 * An agent stages a run and proposes a pivot through the API; an operator signs in, opens the inbox, reads
 * the one proposal with its hash and deadline, and approves it: the commit steps run and the run completes.
 * Then one pivot open in two tabs: the first tab's approval goes through, the second tab's stale one is
 * refused (APPROVAL_DECIDED) and the page says so; every commit effect exists exactly once.
 *
 * Skipped, saying why, only where /usr/bin/chromium does not exist (`.ci/run` installs it).
 */
import { existsSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { correctionHash, createApiToken, stepKey } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { effectsFor } from './fixtures/effect-tools.js';
import {
  killAll,
  startRole,
  waitFor,
  type RoleProcess,
  waitForReady,
} from './fixtures/dispatcher-processes.js';
import { freePort } from '@agent-saga/core';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(
    `console-browser.test.ts skipped: ${CHROMIUM} does not exist (apt-get install -y chromium; .ci/run does it)`,
  );

/** The fast path on, as in production; short polls so the commit steps follow each other quickly. */
const ROLE_ENV = { SAGA_FAST_PATH: 'true', RELAY_GRACE_MS: '300', RECONCILER_SWEEP_MS: '1000' };

let env: TestEnv;
let fx: Kysely<unknown>;
let baseUrl: string;
let agent: string;
let operator: string;
let browser: Browser | undefined;
const procs: RoleProcess[] = [];

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function http(method: string, path: string, body?: unknown, token = agent): Promise<Answer> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The summary holds markup on purpose: the console must show it as text. */
const SUMMARY = 'Refund and tell the customer <b class="injected">now</b>';

/**
 * An agent's run up to the pivot: one compensatable step confirmed (the staged part), then the pivot
 * proposing two commit steps (a note and the customer's email).
 */
async function stageAndPivot(runId: string) {
  expect((await http('POST', '/v1/runs', { runId })).status).toBe(201);
  const staged = await http('POST', `/v1/runs/${runId}/calls`, {
    tool: 'create_note',
    args: { orderId: `${runId}-o1`, text: 'refund requested' },
    stepIdx: 0,
    waitMs: 20_000,
  });
  expect(staged.body.status).toBe('CONFIRMED');
  const pivot = await http('POST', `/v1/runs/${runId}/pivot`, {
    commit: [
      { tool: 'create_note', args: { orderId: `${runId}-o2`, text: 'refund issued' } },
      { tool: 'send_notice', args: { to: 'ada@example.com', text: 'your refund is on its way' } },
    ],
    summary: SUMMARY,
  });
  expect(pivot.status).toBe(202);
  return pivot.body as { approvalId: string; hash: string; expiresAt: string };
}

/**
 * A new tab of `context`, signed in as the operator (each tab keeps its own session storage, so each signs
 * in), on the inbox with the approval `id` opened from its queue.
 */
async function openInbox(context: BrowserContext, id: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${baseUrl}/console`);
  await page.fill('#token', operator);
  await page.click('#sign-in-form button[type=submit]');
  await page.click('nav a[data-nav=inbox]');
  await page.click(`.queue a[data-approval-id="${id}"]`);
  await page.waitForSelector(`article.proposal[data-approval-id="${id}"]`);
  return page;
}

async function runSettled(runId: string): Promise<Record<string, unknown>> {
  return waitFor(
    `run ${runId} COMPLETED`,
    async () => {
      const r = await http('GET', `/v1/runs/${runId}`);
      return r.body.status === 'COMPLETED' ? r.body : undefined;
    },
    30_000,
    200,
  );
}

/** Each commit step's effect, counted in the fixture system by its key: exactly one each. */
async function expectCommitEffectsOnce(runId: string) {
  expect(await effectsFor(fx, stepKey(runId, 1, 'create_note'))).toHaveLength(1);
  expect(await effectsFor(fx, stepKey(runId, 2, 'send_notice'))).toHaveLength(1);
}

describe.skipIf(!hasChromium)('operator console in chromium', () => {
  beforeAll(async () => {
    ({ env, fx } = await createFixtureTestEnv('console'));
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    procs.push(startRole(env, 'api', { ...ROLE_ENV, PORT: String(port) }));
    procs.push(startRole(env, 'relay', ROLE_ENV));
    procs.push(startRole(env, 'executor', ROLE_ENV));
    procs.push(startRole(env, 'reconciler', ROLE_ENV));
    agent = await createApiToken(env.db, { tenantId: 'acme', role: 'agent', label: 'bot' });
    operator = await createApiToken(env.db, { tenantId: 'acme', role: 'operator', label: 'alice' });
    // Four roles start at once (tsx compiles each): on a busy 2-core machine readiness alone can take 40 s.
    [browser] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] }),
      waitForReady(baseUrl, 70_000),
    ]);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await killAll(procs);
    await env?.close();
  });

  it('is served at /console without a token, under a CSP, and kept out of the OpenAPI document', async () => {
    const page = await fetch(`${baseUrl}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const script = await fetch(`${baseUrl}/console/app.js`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${baseUrl}/console/..%2Fconsole-routes.ts`)).status).toBe(404);
    const doc = (await (await fetch(`${baseUrl}/docs/json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/console'))).toEqual([]);
    expect(Object.keys(doc.paths)).toContain('/v1/approvals/{id}/decision');
  });

  it('an operator approves the pivot from the inbox: the commit steps run and the run completes', async () => {
    const p = await stageAndPivot('console-ok');
    const context = await browser!.newContext();
    const page = await openInbox(context, p.approvalId);
    const card = page.locator(`article.proposal[data-approval-id="${p.approvalId}"]`);
    await expect.poll(() => card.locator('.hash').textContent()).toBe(p.hash);
    expect(await card.locator('.deadline time').textContent()).toBe(p.expiresAt);
    expect(await card.locator('.summary').textContent()).toBe(SUMMARY);
    expect(await page.locator('b.injected').count()).toBe(0);
    const tools = await card.locator('.proposal-steps .tool').allTextContents();
    expect(tools).toEqual(['create_note', 'send_notice']);
    expect(await card.locator('.proposal-steps').textContent()).toContain(
      stepKey('console-ok', 2, 'send_notice'),
    );
    expect(await card.locator('.risk').textContent()).toContain('send_notice');
    expect(await card.locator('.staged').textContent()).toContain('create_note');
    // The token is in this tab's session storage, never in the address.
    expect(page.url()).not.toContain(operator);

    await card.locator('button.approve').click();
    await card.locator('.outcome .success').waitFor();
    expect(await card.locator('.approval-status').textContent()).toBe('approved');

    const run = await runSettled('console-ok');
    expect(run.steps).toMatchObject([
      { stepIdx: 0, status: 'CONFIRMED' },
      { stepIdx: 1, tool: 'create_note', status: 'CONFIRMED' },
      { stepIdx: 2, tool: 'send_notice', status: 'CONFIRMED' },
    ]);
    await expectCommitEffectsOnce('console-ok');
    const approval = await http('GET', `/v1/approvals/${p.approvalId}`, undefined, operator);
    expect(approval.body).toMatchObject({ status: 'approved', decidedBy: 'alice', hash: p.hash });

    // The timeline shows the decision with who made it.
    await page.click(`a.run-link:text("console-ok")`);
    const decision = page.locator('table.events tr', { hasText: 'decision' });
    await decision.first().waitFor();
    expect(await decision.first().textContent()).toContain('alice');
    await context.close();
  });

  it('two tabs on one pivot: the second approval is refused with APPROVAL_DECIDED, and effects happen once', async () => {
    const p = await stageAndPivot('console-twice');
    const context = await browser!.newContext();
    const tab1 = await openInbox(context, p.approvalId);
    const tab2 = await openInbox(context, p.approvalId);
    for (const tab of [tab1, tab2])
      expect(await tab.locator('article.proposal .hash').textContent()).toBe(p.hash);

    await tab1.locator('article.proposal button.approve').click();
    await tab1.locator('article.proposal .outcome .success').waitFor();

    await tab2.locator('article.proposal button.approve').click();
    const refusal = tab2.locator('article.proposal .refusal[role=alert]');
    await refusal.waitFor();
    expect(await refusal.getAttribute('data-code')).toBe('APPROVAL_DECIDED');
    expect(await refusal.textContent()).toContain('HTTP 409');
    expect(await tab2.locator('article.proposal button.approve').isDisabled()).toBe(true);

    await runSettled('console-twice');
    await expectCommitEffectsOnce('console-twice');
    const events = await http('GET', '/v1/runs/console-twice/events');
    const decisions = (events.body.events as { kind: string }[]).filter((e) => e.kind === 'decision');
    expect(decisions).toHaveLength(1);
    await context.close();
  });

  it('a correction edited in the console is a new proposal with a new hash; the old hash no longer sends', async () => {
    const command = {
      template: 'email_sent_in_error',
      to: 'ada@example.com',
      vars: { originalTemplate: 'x' },
    };
    const [row] = await env.db
      .insertInto('corrections')
      .values({
        run_id: 'console-ok',
        step_idx: 2,
        tenant_id: 'acme',
        command: JSON.stringify(command),
        audience: ['customer'],
        status: 'open',
      })
      .returning('id')
      .execute();
    const id = String(row!.id);
    const oldHash = correctionHash(command);
    const context = await browser!.newContext();
    const page = await context.newPage();
    await page.goto(`${baseUrl}/console`);
    await page.fill('#token', operator);
    await page.click('#sign-in-form button[type=submit]');
    await page.click('nav a[data-nav=corrections]');
    const card = page.locator(`article[data-correction-id="${id}"]`);
    expect(await card.locator('.hash').textContent()).toBe(oldHash);

    await card.locator('details.edit-correction summary').click();
    await card.locator('textarea').fill('{ "originalTemplate": "x", "note": "sorry <b>twice</b>" }');
    await card.locator('button.edit').click();
    const newHash = correctionHash({
      ...command,
      vars: { originalTemplate: 'x', note: 'sorry <b>twice</b>' },
    });
    await expect
      .poll(() => page.locator(`article[data-correction-id="${id}"] .hash`).textContent())
      .toBe(newHash);
    expect(await page.locator('b').filter({ hasText: 'twice' }).count()).toBe(0);

    const stale = await http('POST', `/v1/corrections/${id}/send`, { hash: oldHash }, operator);
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'APPROVAL_HASH_MISMATCH' });

    const fresh = page.locator(`article[data-correction-id="${id}"]`);
    await fresh.locator('button.reject').click();
    await fresh.locator('.outcome .success').waitFor();
    const after = await http('GET', '/v1/corrections?runId=console-ok&status=dismissed', undefined, operator);
    expect(after.body.corrections).toEqual([
      expect.objectContaining({ id, status: 'dismissed', decidedBy: 'alice', hash: newHash }),
    ]);
    await context.close();
  });
});
