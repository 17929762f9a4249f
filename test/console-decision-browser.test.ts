/**
 * The model's decision in the console's run timeline, in chromium: a call's `decision` shows beside its
 * step and its intake and retry events, as text (a value holding markup is shown, never run), under the
 * console's CSP. Skipped, saying so, where chromium is not installed (as `console-browser.test.ts`).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, freePort } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { closeFixtureTestEnv, createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { startRole, waitForReady, type RoleProcess } from './fixtures/dispatcher-processes.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`console-decision-browser.test.ts skipped: ${CHROMIUM} does not exist`);

let env: TestEnv | undefined;
let baseUrl: string;
let agent: string;
let operator: string;
let browser: Browser | undefined;
const procs: RoleProcess[] = [];

/** The model id holds markup on purpose: the console must show it as text. */
const MODEL = 'claude-x <b class="injected">bold</b>';

async function post(path: string, body: unknown): Promise<number> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.status;
}

describe.skipIf(!hasChromium)('the console timeline shows the model decision', () => {
  beforeAll(async () => {
    env = (await createFixtureTestEnv('console_decision')).env;
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    // No executor: the step stays INTENDED, which is all the timeline needs.
    procs.push(startRole(env, 'api', { PORT: String(port) }));
    agent = await createApiToken(env.db, { tenantId: 'acme', role: 'agent' });
    operator = await createApiToken(env.db, { tenantId: 'acme', role: 'operator', label: 'alice' });
    [browser] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] }),
      waitForReady(baseUrl, 60_000),
    ]);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await closeFixtureTestEnv(env, procs);
  });

  it('beside the step and its intake and retry events, as text', async () => {
    expect(await post('/v1/runs', { runId: 'console-decided' })).toBe(201);
    const call = {
      tool: 'create_note',
      args: { orderId: 'o1', text: 'refund asked' },
      stepIdx: 0,
      waitMs: 0,
    };
    expect(
      await post('/v1/runs/console-decided/calls', { ...call, decision: { model: MODEL, turnId: 't-1' } }),
    ).toBe(202);
    expect(await post('/v1/runs/console-decided/calls', { ...call, decision: { turnId: 't-2' } })).toBe(202);

    const page = await browser!.newPage();
    await page.goto(`${baseUrl}/console`);
    await page.fill('#token', operator);
    await page.click('#sign-in-form button[type=submit]');
    await page.goto(`${baseUrl}/console#/runs/console-decided`);
    await page.waitForSelector('table.events');
    const intake = page.locator('table.events tr', { hasText: 'intake' });
    await expect.poll(() => intake.locator('.decision').textContent()).toBe(`model: ${MODEL}turn: t-1`);
    const retry = page.locator('table.events tr', { hasText: 'retry_call' });
    expect(await retry.locator('.decision').textContent()).toBe('turn: t-2');
    // The step shows its latest call's decision.
    expect(await page.locator('table.steps .decision').textContent()).toBe('turn: t-2');
    expect(await page.locator('b.injected').count()).toBe(0);
  });
});
