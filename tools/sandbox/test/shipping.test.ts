import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../src/index.js';
import { call } from './http-client.js';

let sandbox: RunningSandbox;
let auth: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox();
  auth = { authorization: `Bearer ${sandbox.credentials.shippingApiKey}` };
});
afterAll(async () => sandbox.close());
beforeEach(() => sandbox.admin.reset());

const ship = (key: string | undefined, body: unknown) =>
  call(`${sandbox.urls.shipping}/v1/shipments`, {
    json: body,
    headers: { ...auth, ...(key === undefined ? {} : { 'idempotency-key': key }) },
  });

const reship = { orderId: '1183', items: [{ sku: 'TEE-L', quantity: 1 }], reason: 'damaged in transit' };

describe('shipping sandbox', () => {
  it('creates a shipment, replays it under the same key, refuses another body with 409', async () => {
    const first = await ship('run1-3', reship);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      object: 'shipment',
      status: 'created',
      orderId: '1183',
      idempotencyKey: 'run1-3',
    });
    const again = await ship('run1-3', reship);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((again.body as { id: string }).id).toBe((first.body as { id: string }).id);
    const other = await ship('run1-3', { ...reship, reason: 'other' });
    expect(other.status).toBe(409);
    expect(other.body).toEqual({
      error: { code: 'idempotency_key_mismatch', message: expect.any(String) as string },
    });
    const listed = await call(`${sandbox.urls.shipping}/v1/shipments?idempotency_key=run1-3`, {
      headers: auth,
    });
    expect((listed.body as { object: string; data: unknown[] }).data).toHaveLength(1);
  });

  it('answers 422 order_not_eligible and replays it', async () => {
    const body = { orderId: '1182', items: [{ sku: 'MUG-BLUE', quantity: 1 }], reason: 'lost' };
    const first = await ship('run1-4', body);
    expect(first.status).toBe(422);
    expect((first.body as { error: { code: string } }).error.code).toBe('order_not_eligible');
    const again = await ship('run1-4', body);
    expect(again.status).toBe(422);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(sandbox.admin.ledger().shipping.shipments).toHaveLength(0);
  });

  it('requires auth and an Idempotency-Key', async () => {
    const noAuth = await call(`${sandbox.urls.shipping}/v1/orders/1182`);
    expect(noAuth.status).toBe(401);
    expect(noAuth.body).toMatchObject({ error: { code: 'unauthorized' } });
    const noKey = await ship(undefined, reship);
    expect(noKey.status).toBe(400);
  });

  it('answers 409 idempotency_key_in_use while in flight', async () => {
    sandbox.admin.addFault({
      vendor: 'shipping',
      method: 'POST',
      path: '/v1/shipments',
      nth: 1,
      kind: 'delay',
      delayMs: 300,
      phase: 'during_processing',
    });
    const first = ship('k-flight', reship);
    await new Promise((r) => setTimeout(r, 80));
    const second = await ship('k-flight', reship);
    expect(second.status).toBe(409);
    expect((second.body as { error: { code: string } }).error.code).toBe('idempotency_key_in_use');
    expect((await first).status).toBe(201);
  });

  it('cancels idempotently and serves orders', async () => {
    const { id } = (await ship('k-cancel', reship)).body as { id: string };
    const cancel = () =>
      call(`${sandbox.urls.shipping}/v1/shipments/${id}/cancel`, { method: 'POST', headers: auth });
    expect(((await cancel()).body as { status: string }).status).toBe('canceled');
    expect((await cancel()).status).toBe(200);
    expect(
      (
        (await call(`${sandbox.urls.shipping}/v1/shipments/${id}`, { headers: auth })).body as {
          status: string;
        }
      ).status,
    ).toBe('canceled');
    const order = await call(`${sandbox.urls.shipping}/v1/orders/1182`, { headers: auth });
    expect(order.body).toEqual({
      id: '1182',
      customerId: 'cus_sandbox_ada',
      items: [{ sku: 'MUG-BLUE', quantity: 1 }],
      eligibleForReship: false,
    });
    expect((await call(`${sandbox.urls.shipping}/v1/orders/nope`, { headers: auth })).status).toBe(404);
  });
});
