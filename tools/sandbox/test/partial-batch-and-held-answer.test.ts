/**
 * The two faults the simulator's newer modes rest on: `partial_batch` (the vendor runs only part of a
 * request, then errors, and its idempotency replays the error) and a `delay` after processing (the effect
 * exists and the answer waits, the window in which a caller can die before reading it).
 */
import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, stripePartialBatchFault, type RunningSandbox } from '../src/index.js';
import { call } from './http-client.js';

let sandbox: RunningSandbox;
let stripe: Stripe;

beforeAll(async () => {
  sandbox = await startSandbox();
  stripe = new Stripe(sandbox.credentials.stripeSecretKey, {
    host: sandbox.host,
    port: sandbox.ports.stripe,
    protocol: 'http',
    maxNetworkRetries: 0,
  });
});
afterAll(async () => sandbox.close());
beforeEach(() => sandbox.admin.reset());

const charge = (key: string) =>
  stripe.paymentIntents.create(
    {
      amount: 2_000,
      currency: 'usd',
      customer: 'cus_sandbox_ada',
      payment_method: 'pm_card_visa',
      confirm: true,
      off_session: true,
      metadata: { saga_key: key },
    },
    { idempotencyKey: key },
  );

describe('partial_batch', () => {
  it('creates the PaymentIntent without confirming it, answers 500, and replays the 500 to a keyed retry', async () => {
    sandbox.admin.addFault(stripePartialBatchFault());
    await expect(charge('k-partial')).rejects.toMatchObject({ statusCode: 500 });
    const [pi, ...more] = sandbox.admin.ledger().stripe.paymentIntents;
    expect(more).toHaveLength(0);
    expect(pi?.status).toBe('requires_confirmation');
    // Stripe saves a 500 under its key: the retry is told the same, and no second PaymentIntent exists.
    await expect(charge('k-partial')).rejects.toMatchObject({ statusCode: 500 });
    expect(sandbox.admin.ledger().stripe.paymentIntents).toHaveLength(1);
    expect(sandbox.admin.faults()).toMatchObject([{ fired: 1, processed: 1 }]);
  });

  it('is refused without the fields to omit', () => {
    expect(() => sandbox.admin.addFault({ vendor: 'stripe', nth: 1, kind: 'partial_batch' })).toThrow(/omit/);
  });
});

describe('delay after processing', () => {
  it('commits, holds the answer past the client, and says which client port sent it', async () => {
    sandbox.admin.addFault({
      vendor: 'shipping',
      method: 'POST',
      path: '/v1/shipments',
      nth: 1,
      kind: 'delay',
      phase: 'after_processing',
      delayMs: 2_000,
      note: 'kill the sender',
    });
    const sent = call(`${sandbox.urls.shipping}/v1/shipments`, {
      headers: {
        authorization: `Bearer ${sandbox.credentials.shippingApiKey}`,
        'idempotency-key': 'k-held',
      },
      json: { orderId: '1183', items: [{ sku: 'TEE-L', quantity: 1 }], reason: 'damaged' },
      // Shorter than the hold, long enough for the request to be read and processed on a slow night.
      timeoutMs: 800,
    });
    await expect(sent).rejects.toThrow();
    // The client gave up at 800 ms, during the hold; the shipment was made before the hold began.
    expect(sandbox.admin.ledger().shipping.shipments).toHaveLength(1);
    const [fault] = sandbox.admin.faults();
    expect(fault).toMatchObject({ fired: 1, processed: 1, note: 'kill the sender' });
    expect(fault?.lastClientPort).toBeGreaterThan(0);
  });
});
