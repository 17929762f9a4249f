/**
 * The step's trace id in the console's run view, in chromium: a call sent with a W3C `traceparent` shows
 * that trace id on its step, so an operator can take it to the tracing backend. Skipped, saying so, where
 * chromium is not installed (as `console-browser.test.ts`).
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
if (!hasChromium) console.warn(`console-trace-browser.test.ts skipped: ${CHROMIUM} does not exist`);

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';

let env: TestEnv | undefined;
let baseUrl: string;
let agent: string;
let operator: string;
let browser: Browser | undefined;
const procs: RoleProcess[] = [];

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return res.status;
}

describe.skipIf(!hasChromium)('the console shows each step’s trace id', () => {
  beforeAll(async () => {
    env = (await createFixtureTestEnv('console_trace')).env;
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    // No executor: the step stays INTENDED; its trace id is stored with the intent.
    procs.push(startRole(env, 'api', { PORT: String(port) }));
    agent = await createApiToken(env.db, { tenantId: 'acme', role: 'agent' });
    operator = await createApiToken(env.db, { tenantId: 'acme', role: 'operator', label: 'tracy' });
    [browser] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] }),
      waitForReady(baseUrl, 60_000),
    ]);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await closeFixtureTestEnv(env, procs);
  });

  it('on the step the traced call made', async () => {
    expect(await post('/v1/runs', { runId: 'console-traced' })).toBe(201);
    const call = { tool: 'create_note', args: { orderId: 'o1', text: 'traced' }, stepIdx: 0, waitMs: 0 };
    const traceparent = `00-${TRACE_ID}-b7ad6b7169203331-01`;
    expect(await post('/v1/runs/console-traced/calls', call, { traceparent })).toBe(202);

    const page = await browser!.newPage();
    await page.goto(`${baseUrl}/console`);
    await page.fill('#token', operator);
    await page.click('#sign-in-form button[type=submit]');
    await page.goto(`${baseUrl}/console#/runs/console-traced`);
    await page.waitForSelector('table.steps');
    await expect.poll(() => page.locator('table.steps .trace-id').textContent()).toBe(TRACE_ID);
  });
});
