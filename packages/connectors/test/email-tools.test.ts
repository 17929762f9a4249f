import {
  ClientError,
  classifyToolError,
  createToolRegistry,
  OutcomeUnknownError,
  parseArgs,
  StepStatus,
  type AnyTool,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { startSandbox, type RunningSandbox } from '@agent-saga/sandbox';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createEmailTools,
  createJiraTools,
  createShippingTools,
  DEFAULT_EMAIL_TEMPLATES,
  emailConfigFromEnv,
  VendorIdempotencyMismatchError,
  jiraConfigFromEnv,
  shippingConfigFromEnv,
  type EmailConfig,
} from '../src/index.js';
import { migrateConnectorTables } from '../src/migrate-connector-tables.js';
import { acceptsArgs, rejectionOf, sleep, stepContext, toolNamed } from './support/http-connector-kit.js';

let sandbox: RunningSandbox;
let env: TestEnv;
let tools: readonly AnyTool[];

function emailConfig(extra: Record<string, string> = {}): EmailConfig {
  return emailConfigFromEnv({
    EMAIL_API_BASE: sandbox.urls.email,
    EMAIL_API_KEY: sandbox.credentials.emailApiKey,
    EMAIL_FROM: 'Acme Support <support@acme.test>',
    EMAIL_LOOKUP_LAG_MS: '250',
    ...env.env,
    ...extra,
  });
}

const tool = (name: string) => toolNamed(tools, name);
const emails = () => sandbox.admin.ledger().email.emails;
const call = (name: string, args: unknown, ctx = stepContext(name)) =>
  tool(name).execute(parseArgs(tool(name), args), ctx) as Promise<{
    externalRef: string;
    result: Record<string, unknown>;
  }>;
const refundMail = {
  to: 'ada@example.com',
  template: 'refund_confirmation',
  vars: { orderId: '1182', amount: 4900, currency: 'eur' },
};

beforeAll(async () => {
  env = await createTestEnv('connectors_email');
  await migrateConnectorTables(env.db, env.schema); // email_drafts, as `agent-saga migrate` does
  sandbox = await startSandbox();
  tools = createEmailTools(emailConfig(), DEFAULT_EMAIL_TEMPLATES, { db: env.db });
});
afterAll(async () => {
  await sandbox?.close();
  await env?.close();
});
beforeEach(() => sandbox.admin.reset());

describe('email connector against the sandbox', () => {
  it('all Jira, email and shipping tools register together with the core registry', () => {
    const all = [
      ...createJiraTools(
        jiraConfigFromEnv({
          JIRA_BASE_URL: sandbox.urls.jira,
          JIRA_EMAIL: sandbox.credentials.jiraEmail,
          JIRA_API_TOKEN: sandbox.credentials.jiraApiToken,
          JIRA_PROJECT_KEY: 'SUP',
        }),
      ),
      ...tools,
      ...createShippingTools(
        shippingConfigFromEnv({ SHIPPING_API_BASE: sandbox.urls.shipping, SHIPPING_API_KEY: 'ship_sandbox' }),
      ),
    ];
    expect(createToolRegistry(all).list()).toHaveLength(11);
    expect(tool('send_email').lookupLagMs).toBe(250);
    expect(tool('send_email').correction?.(refundMail, 'k')).toEqual({
      template: 'email_sent_in_error',
      to: 'ada@example.com',
      vars: { originalTemplate: 'refund_confirmation' },
    });
    expect(tool('create_email_draft').compensate?.(refundMail, 'k1')).toEqual({
      tool: 'delete_email_draft',
      args: { draft: { $ref: 'k1' } },
    });
  });

  it('send_email: rendered by the harness, sent with Idempotency-Key and the saga_key tag', async () => {
    const ctx = stepContext('send_email');
    const effect = await call('send_email', refundMail, ctx);
    expect(emails()).toEqual([
      expect.objectContaining({
        id: effect.externalRef,
        to: ['ada@example.com'],
        subject: 'Your refund for order 1182',
        tags: [{ name: 'saga_key', value: ctx.idempotencyKey }],
        idempotencyKey: ctx.idempotencyKey,
      }),
    ]);
    expect(await tool('send_email').lookup!(ctx.idempotencyKey, ctx)).toMatchObject({
      externalRef: effect.externalRef,
    });
  });

  it('504 after commit: unknown, the email exists; a same-key retry replays (one email); lookup finds it', async () => {
    sandbox.admin.addFault({ vendor: 'email', method: 'POST', path: '/emails', nth: 1, kind: 'error_after' });
    const ctx = stepContext('send_email');
    const err = await rejectionOf(call('send_email', refundMail, ctx));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(classifyToolError(err)).toMatchObject({ status: StepStatus.UNKNOWN, error: { status: 504 } });
    expect(emails()).toHaveLength(1);

    expect(await tool('send_email').lookup!(ctx.idempotencyKey, ctx)).toMatchObject({
      externalRef: emails()[0]!.id,
    });
    const retry = await call('send_email', refundMail, ctx);
    expect(retry.externalRef).toBe(emails()[0]!.id);
    expect(emails()).toHaveLength(1);
  });

  it('lookup pages through the list, reads only our sender, and finds an older email by its tag', async () => {
    const target = stepContext('send_email');
    await call('send_email', refundMail, target);
    const other = createEmailTools(
      emailConfig({ EMAIL_FROM: 'noreply@other.test' }),
      DEFAULT_EMAIL_TEMPLATES,
      { db: env.db },
    );
    for (let i = 0; i < 3; i++) await call('send_email', refundMail); // newer emails of ours
    // 101 newer emails of another sender push the target onto the second page of `GET /emails`.
    for (let i = 0; i < 101; i++) {
      const send = toolNamed(other, 'send_email');
      await send.execute(parseArgs(send, refundMail), stepContext('send_email'));
    }
    sandbox.admin.clearRequests();
    const found = await tool('send_email').lookup!(target.idempotencyKey, target);
    expect(found).toMatchObject({ externalRef: emails()[0]!.id });
    const reads = sandbox.admin.requests().filter((r) => r.method === 'GET' && r.path.startsWith('/emails/'));
    expect(reads).toHaveLength(4); // three newer of ours, then the target; the other sender's are skipped
    const pages = sandbox.admin.requests().filter((r) => r.method === 'GET' && r.path === '/emails');
    expect(pages).toHaveLength(2);
    expect(await tool('send_email').lookup!('0'.repeat(32), target)).toBeNull();
  });

  it('lookup is bounded: past its read limit it says "unknown", never "absent"; outside its window, null', async () => {
    for (let i = 0; i < 3; i++) await call('send_email', refundMail);
    const bounded = toolNamed(
      createEmailTools(emailConfig({ EMAIL_LOOKUP_MAX_READS: '2' }), DEFAULT_EMAIL_TEMPLATES, { db: env.db }),
      'send_email',
    );
    const ctx = stepContext('send_email');
    const err = await rejectionOf(bounded.lookup!('f'.repeat(32), ctx));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err).toMatchObject({ vendorCode: 'lookup_bound_reached' });

    const narrow = toolNamed(
      createEmailTools(emailConfig({ EMAIL_LOOKUP_WINDOW_MS: '1' }), DEFAULT_EMAIL_TEMPLATES, { db: env.db }),
      'send_email',
    );
    const sent = stepContext('send_email');
    await call('send_email', refundMail, sent);
    await sleep(20);
    // The trade-off made visible: an email older than the window is not searched.
    expect(await narrow.lookup!(sent.idempotencyKey, sent)).toBeNull();
  });

  it("lookup reads only the emails sent since its step was recorded, less the clocks' skew", async () => {
    for (let i = 0; i < 3; i++) await call('send_email', refundMail); // older than the step
    const older = new Set(emails().map((e) => e.id));
    await sleep(20);
    const target = stepContext('send_email'); // recorded now: its email can only be newer
    await sleep(20);
    await call('send_email', refundMail, target);
    for (let i = 0; i < 2; i++) await call('send_email', refundMail);
    const emailReads = () =>
      sandbox.admin
        .requests()
        .filter((r) => r.method === 'GET' && r.path.startsWith('/emails/'))
        .map((r) => r.path.slice('/emails/'.length));
    const sinceStep = toolNamed(
      createEmailTools(emailConfig({ EMAIL_LOOKUP_CLOCK_SKEW_MS: '0' }), DEFAULT_EMAIL_TEMPLATES, {
        db: env.db,
      }),
      'send_email',
    );
    sandbox.admin.clearRequests();
    expect(await sinceStep.lookup!(target.idempotencyKey, target)).toMatchObject({
      externalRef: emails()[3]!.id,
    });
    sandbox.admin.clearRequests();
    // Absent: the three emails sent since the step are read, none of the older ones.
    expect(await sinceStep.lookup!('0'.repeat(32), target)).toBeNull();
    expect(emailReads()).toHaveLength(3);
    expect(emailReads().filter((id) => older.has(id))).toEqual([]);
    // With the default margin for the clocks (minutes), the older ones are read too.
    sandbox.admin.clearRequests();
    expect(await tool('send_email').lookup!('0'.repeat(32), target)).toBeNull();
    expect(emailReads()).toHaveLength(6);
  });

  it('a Resend validation error (422, a tag value Resend refuses) is a ClientError: FAILED, nothing sent', async () => {
    const ctx = { ...stepContext('send_email'), idempotencyKey: 'not a valid tag value!' };
    const err = await rejectionOf(call('send_email', refundMail, ctx));
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).details).toMatchObject({ status: 422, vendorCode: 'validation_error' });
    expect(classifyToolError(err).status).toBe(StepStatus.FAILED);
    expect(emails()).toEqual([]);
  });

  it('template problems are refused before any request: unknown names by the schema, bad vars as ClientError', async () => {
    expect(acceptsArgs(tool('send_email'), { ...refundMail, template: 'nope' })).toBe(false);
    const err = await rejectionOf(call('send_email', { ...refundMail, vars: { orderId: '1182' } }));
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).details).toMatchObject({ vendorCode: 'invalid_template_vars' });
    expect(sandbox.admin.requests()).toEqual([]);
  });

  it('same key, other payload → VENDOR_IDEMPOTENCY_MISMATCH; same key in flight → unknown', async () => {
    const ctx = stepContext('send_email');
    await call('send_email', refundMail, ctx);
    const mismatch = await rejectionOf(
      call('send_email', { ...refundMail, vars: { ...refundMail.vars, amount: 5000 } }, ctx),
    );
    expect(mismatch).toBeInstanceOf(VendorIdempotencyMismatchError);
    expect(classifyToolError(mismatch)).toMatchObject({
      status: StepStatus.UNKNOWN,
      error: { code: 'VENDOR_IDEMPOTENCY_MISMATCH', vendorCode: 'invalid_idempotent_request' },
    });

    sandbox.admin.addFault({
      vendor: 'email',
      method: 'POST',
      path: '/emails',
      nth: 1,
      kind: 'delay',
      delayMs: 600,
      phase: 'during_processing',
    });
    const runId = 'run-email-in-flight';
    const slow = call('send_email', refundMail, stepContext('send_email', { runId }));
    await sleep(100);
    const inFlight = await rejectionOf(call('send_email', refundMail, stepContext('send_email', { runId })));
    expect(inFlight).toBeInstanceOf(OutcomeUnknownError);
    expect(inFlight).toMatchObject({ status: 409, vendorCode: 'concurrent_idempotent_requests' });
    await slow;
    expect(emails()).toHaveLength(2);
  });

  it('drafts are kept by the harness: one per key, found by key, deleted under their own key', async () => {
    const ctx = stepContext('create_email_draft', { tenantId: 'acme' });
    const draft = await call('create_email_draft', refundMail, ctx);
    expect(draft.externalRef).toMatch(/^edr_[0-9a-f]{24}$/);
    expect((await call('create_email_draft', refundMail, ctx)).externalRef).toBe(draft.externalRef);
    expect(await tool('create_email_draft').lookup!(ctx.idempotencyKey, ctx)).toMatchObject({
      externalRef: draft.externalRef,
    });
    expect(emails()).toEqual([]); // nothing reached the provider

    const del = stepContext('delete_email_draft', { tenantId: 'acme' });
    expect(await tool('delete_email_draft').lookup!(del.idempotencyKey, del)).toBeNull();
    expect((await call('delete_email_draft', { draft: draft.externalRef }, del)).result).toMatchObject({
      status: 'deleted',
      alreadyDeleted: false,
    });
    expect((await call('delete_email_draft', { draft: draft.externalRef }, del)).result).toMatchObject({
      alreadyDeleted: true,
    });
    expect(await tool('delete_email_draft').lookup!(del.idempotencyKey, del)).toMatchObject({
      externalRef: draft.externalRef,
      result: { status: 'deleted' },
    });

    // Another tenant sees none of it.
    const stranger = { ...del, tenantId: 'globex' };
    expect(await tool('delete_email_draft').lookup!(del.idempotencyKey, stranger)).toBeNull();
    const err = await rejectionOf(call('delete_email_draft', { draft: draft.externalRef }, stranger));
    expect(err).toBeInstanceOf(ClientError);
  });
});
