import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../src/index.js';
import { basic, call } from './http-client.js';

let sandbox: RunningSandbox;
let stripe: Stripe;
let jiraAuth: Record<string, string>;
let shipAuth: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox();
  stripe = new Stripe(sandbox.credentials.stripeSecretKey, {
    host: sandbox.host,
    port: sandbox.ports.stripe,
    protocol: 'http',
    maxNetworkRetries: 0,
  });
  jiraAuth = { authorization: basic(sandbox.credentials.jiraEmail, sandbox.credentials.jiraApiToken) };
  shipAuth = { authorization: `Bearer ${sandbox.credentials.shippingApiKey}` };
});
afterAll(async () => sandbox.close());
beforeEach(() => sandbox.admin.reset());

const admin = (path: string, init: { method?: string; json?: unknown } = {}) =>
  call(`${sandbox.urls.admin}/__admin${path}`, init);

const createTicket = (timeoutMs = 5_000) =>
  call(`${sandbox.urls.jira}/rest/api/3/issue`, {
    headers: jiraAuth,
    timeoutMs,
    json: {
      fields: {
        project: { key: 'SUP' },
        issuetype: { name: 'Task' },
        summary: 'Order #1182',
        labels: ['saga-r-0'],
      },
    },
  });

const ship = (key: string) =>
  call(`${sandbox.urls.shipping}/v1/shipments`, {
    headers: { ...shipAuth, 'idempotency-key': key },
    json: { orderId: '1183', items: [{ sku: 'TEE-L', quantity: 1 }], reason: 'damaged' },
  });

const charge = (key: string) =>
  stripe.paymentIntents.create(
    {
      amount: 2_000,
      currency: 'usd',
      customer: 'cus_sandbox_ada',
      confirm: true,
      off_session: true,
      metadata: { saga_key: key },
    },
    { idempotencyKey: key },
  );

describe('fault injection through /__admin/faults', () => {
  it('drop: the connection closes before processing and nothing exists', async () => {
    const added = await admin('/faults', {
      json: { vendor: 'jira', method: 'POST', path: '/rest/api/3/issue', nth: 1, kind: 'drop' },
    });
    expect(added.status).toBe(201);
    await expect(createTicket()).rejects.toThrow();
    expect(sandbox.admin.ledger().jira.issues).toHaveLength(0);
    expect((await createTicket()).status).toBe(201);
    const listed = (await admin('/faults')).body as {
      faults: { kind: string; matched: number; fired: number }[];
    };
    expect(listed.faults[0]).toMatchObject({ kind: 'drop', matched: 2, fired: 1 });
  });

  it('error_after: the client gets 504 but the effect is in the ledger (Jira has no key: a retry duplicates)', async () => {
    await admin('/faults', {
      json: { vendor: 'jira', path: '/rest/api/3/issue', nth: 1, kind: 'error_after' },
    });
    const answer = await createTicket();
    expect(answer.status).toBe(504);
    expect(answer.body).toMatch(/504 Gateway Time-out/);
    const ledger = (await admin('/ledger')).body as { jira: { issues: { key: string; labels: string[] }[] } };
    expect(ledger.jira.issues).toMatchObject([{ key: 'SUP-1', labels: ['saga-r-0'] }]);
  });

  it('error_after on Stripe: the gateway page is a StripeAPIError, then the keyed retry replays the charge', async () => {
    sandbox.admin.addFault({
      vendor: 'stripe',
      method: 'POST',
      path: '/v1/payment_intents',
      nth: 1,
      kind: 'error_after',
    });
    const error = await charge('r:1').catch((e: unknown) => e);
    // The client reads the body, not the status: an HTML 504 becomes "Invalid JSON", with no statusCode.
    expect(error).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect((error as Stripe.errors.StripeError).message).toMatch(/Invalid JSON/);
    expect(sandbox.admin.ledger().stripe.paymentIntents).toHaveLength(1);
    const retried = await charge('r:1');
    expect(retried.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(sandbox.admin.ledger().stripe.paymentIntents).toMatchObject([
      { id: retried.id, status: 'succeeded' },
    ]);
  });

  it('reset_after: the client sees a socket error, the effect is in the ledger, the keyed retry replays it', async () => {
    sandbox.admin.addFault({
      vendor: 'shipping',
      method: 'POST',
      path: '/v1/shipments',
      nth: 1,
      kind: 'reset_after',
    });
    await expect(ship('r:2')).rejects.toThrow();
    expect(sandbox.admin.ledger().shipping.shipments).toHaveLength(1);
    const retry = await ship('r:2');
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(sandbox.admin.ledger().shipping.shipments).toHaveLength(1);
    const log = sandbox.admin.requests().filter((r) => r.vendor === 'shipping');
    expect(log.map((r) => [r.fault, r.replayed])).toEqual([
      ['reset_after', false],
      [undefined, true],
    ]);
  });

  it('reset_after on Stripe: the official client retries a reset once by itself, and the key makes that a replay', async () => {
    sandbox.admin.addFault({
      vendor: 'stripe',
      method: 'POST',
      path: '/v1/payment_intents',
      nth: 1,
      kind: 'reset_after',
    });
    const pi = await charge('r:3');
    expect(pi.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(sandbox.admin.ledger().stripe.paymentIntents).toHaveLength(1);
  });

  it('delay past the client timeout: the client gives up, the sandbox still processes', async () => {
    sandbox.admin.addFault({
      vendor: 'jira',
      path: '/rest/api/3/issue',
      nth: 1,
      kind: 'delay',
      delayMs: 400,
    });
    await expect(createTicket(150)).rejects.toThrow();
    expect(sandbox.admin.ledger().jira.issues).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 400));
    expect(sandbox.admin.ledger().jira.issues).toHaveLength(1);
  });

  it('delay during processing past the client timeout: the keyed retry afterwards replays the saved answer', async () => {
    sandbox.admin.addFault({
      vendor: 'shipping',
      path: '/v1/shipments',
      nth: 1,
      kind: 'delay',
      delayMs: 300,
      phase: 'during_processing',
    });
    await expect(
      call(`${sandbox.urls.shipping}/v1/shipments`, {
        headers: { ...shipAuth, 'idempotency-key': 'd:1' },
        timeoutMs: 100,
        json: { orderId: '1183', items: [{ sku: 'TEE-L', quantity: 1 }], reason: 'damaged' },
      }),
    ).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 350));
    const retry = await ship('d:1');
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(sandbox.admin.ledger().shipping.shipments).toHaveLength(1);
  });

  it('status: answers the given status and body without processing, on every match', async () => {
    sandbox.admin.addFault({
      vendor: 'shipping',
      path: '/v1/shipments',
      every: true,
      kind: 'status',
      status: 503,
      body: { error: { code: 'unavailable' } },
    });
    for (const key of ['s:1', 's:2']) {
      const answer = await ship(key);
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({ error: { code: 'unavailable' } });
    }
    expect(sandbox.admin.ledger().shipping.shipments).toHaveLength(0);
    expect((await admin('/faults', { method: 'DELETE' })).status).toBe(204);
    expect((await ship('s:1')).status).toBe(201);
  });

  it('admin: config, seed, reset, bad bodies', async () => {
    expect((await admin('/config', { json: { stripeSearchLagMs: 5 } })).body).toMatchObject({
      stripeSearchLagMs: 5,
    });
    expect((await admin('/config', { json: { nope: 1 } })).status).toBe(400);
    expect((await admin('/faults', { json: { vendor: 'jira', kind: 'drop' } })).status).toBe(400);
    await admin('/seed', {
      json: { orders: [{ id: '2000', customerId: 'cus_x', items: [], eligibleForReship: true }] },
    });
    expect((await call(`${sandbox.urls.shipping}/v1/orders/2000`, { headers: shipAuth })).status).toBe(200);
    await createTicket();
    expect((await admin('/reset', { method: 'POST' })).status).toBe(204);
    expect(sandbox.admin.ledger().jira.issues).toHaveLength(0);
    expect(sandbox.admin.settings().stripeSearchLagMs).toBe(2_000);
    expect((await call(`${sandbox.urls.shipping}/v1/orders/2000`, { headers: shipAuth })).status).toBe(404);
  });
});
