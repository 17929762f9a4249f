/**
 * The fault kinds added for `pnpm simulate`: `redeliver` (the transport sends the request twice: a keyed
 * request is deduplicated by the vendor, an unkeyed one happens twice) and faults scoped by `contains`
 * (only requests whose URL or body carry the text are counted and hit, so concurrent callers do not share
 * faults). Judged from the ledger and the request log.
 */
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

const createTicket = (summary: string) =>
  call(`${sandbox.urls.jira}/rest/api/3/issue`, {
    headers: jiraAuth,
    json: { fields: { project: { key: 'SUP' }, issuetype: { name: 'Task' }, summary } },
  });

const ship = (key: string) =>
  call(`${sandbox.urls.shipping}/v1/shipments`, {
    headers: { ...shipAuth, 'idempotency-key': key },
    json: { orderId: '1183', items: [{ sku: 'TEE-L', quantity: 1 }], reason: 'damaged' },
  });

/** Until the resend (sent after the first answer) has been processed too. */
async function settled(requests: number): Promise<void> {
  for (let i = 0; i < 100 && sandbox.admin.requests().length < requests; i++)
    await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 50));
}

describe('redeliver', () => {
  it('doubles an unkeyed Jira create, while the client sees one answer', async () => {
    const armed = await admin('/faults', {
      json: { vendor: 'jira', method: 'POST', path: '/rest/api/3/issue', nth: 1, kind: 'redeliver' },
    });
    expect(armed.status).toBe(201);
    const answer = await createTicket('Order #77');
    expect(answer.status).toBe(201);
    await settled(2);
    const issues = sandbox.admin.ledger().jira.issues;
    expect(issues.map((i) => i.summary)).toEqual(['Order #77', 'Order #77']);
    expect(sandbox.admin.requests().map((r) => r.fault ?? null)).toEqual(['redeliver', null]);
  });

  it('is deduplicated by the vendor for a keyed shipment: one shipment, the resend replayed', async () => {
    await admin('/faults', {
      json: { vendor: 'shipping', method: 'POST', path: '/v1/shipments', nth: 1, kind: 'redeliver' },
    });
    expect((await ship('k-redeliver')).status).toBe(201);
    await settled(2);
    expect(sandbox.admin.ledger().shipping.shipments).toHaveLength(1);
    const log = sandbox.admin.requests();
    expect(log.map((r) => [r.statusCode, r.replayed])).toEqual([
      [201, false],
      [201, true],
    ]);
  });

  it('resends a form-encoded Stripe request byte for byte: one PaymentIntent under its key', async () => {
    await admin('/faults', {
      json: { vendor: 'stripe', method: 'POST', path: '/v1/payment_intents', nth: 1, kind: 'redeliver' },
    });
    const pi = await stripe.paymentIntents.create(
      { amount: 1_500, currency: 'eur', customer: 'cus_sandbox_ada', confirm: true, off_session: true },
      { idempotencyKey: 'k-stripe-redeliver' },
    );
    expect(pi.status).toBe('succeeded');
    await settled(2);
    const pis = sandbox.admin.ledger().stripe.paymentIntents;
    expect(pis.map((p) => p.id)).toEqual([pi.id]);
    expect(sandbox.admin.requests().filter((r) => r.replayed)).toHaveLength(1);
  });
});

describe('contains', () => {
  it('hits only the requests that carry the text, counting nth among them', async () => {
    const bad = await admin('/faults', {
      json: { vendor: 'jira', path: '/rest/api/3/issue', contains: '', nth: 1, kind: 'drop' },
    });
    expect(bad.status).toBe(400); // an empty text would match everything

    await admin('/faults', {
      json: {
        vendor: 'jira',
        method: 'POST',
        path: '/rest/api/3/issue',
        contains: 'order-B',
        nth: 2,
        kind: 'status',
        status: 429,
        body: { errorMessages: ['Rate limit exceeded'], errors: {} },
      },
    });
    expect((await createTicket('order-A first')).status).toBe(201);
    expect((await createTicket('order-B first')).status).toBe(201);
    expect((await createTicket('order-A second')).status).toBe(201);
    expect((await createTicket('order-B second')).status).toBe(429);
    expect((await createTicket('order-B third')).status).toBe(201);
    expect(sandbox.admin.ledger().jira.issues.map((i) => i.summary)).toEqual([
      'order-A first',
      'order-B first',
      'order-A second',
      'order-B third',
    ]);
    const [fault] = sandbox.admin.faults();
    expect(fault).toMatchObject({ matched: 3, fired: 1 });
  });

  it('matches the query string of a read too', async () => {
    await admin('/faults', {
      json: {
        vendor: 'shipping',
        method: 'GET',
        path: '/v1/shipments',
        contains: 'k-find-me',
        every: true,
        kind: 'status',
        status: 503,
      },
    });
    const hit = await call(`${sandbox.urls.shipping}/v1/shipments?idempotency_key=k-find-me`, {
      headers: shipAuth,
    });
    const miss = await call(`${sandbox.urls.shipping}/v1/shipments?idempotency_key=k-other`, {
      headers: shipAuth,
    });
    expect([hit.status, miss.status]).toEqual([503, 200]);
  });
});
