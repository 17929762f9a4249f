import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../src/index.js';

let sandbox: RunningSandbox;
let stripe: Stripe;

function client(key: string): Stripe {
  return new Stripe(key, {
    host: sandbox.host,
    port: sandbox.ports.stripe,
    protocol: 'http',
    maxNetworkRetries: 0,
  });
}

beforeAll(async () => {
  sandbox = await startSandbox({ settings: { stripeSearchLagMs: 300 } });
  stripe = client(sandbox.credentials.stripeSecretKey);
});
afterAll(async () => sandbox.close());
beforeEach(() => sandbox.admin.reset());

const charge = (key: string, amount = 2_500) =>
  stripe.paymentIntents.create(
    {
      amount,
      currency: 'usd',
      customer: 'cus_sandbox_ada',
      confirm: true,
      off_session: true,
      description: 'Order #1182 refund',
      metadata: { saga_key: key },
    },
    { idempotencyKey: key },
  );

describe('stripe sandbox with the official client', () => {
  it('creates and confirms a PaymentIntent off-session with the customer default payment method', async () => {
    const pi = await charge('run1:0');
    expect(pi.status).toBe('succeeded');
    expect(pi.amount_received).toBe(2_500);
    expect(pi.payment_method).toBe('pm_card_visa');
    expect(pi.metadata).toEqual({ saga_key: 'run1:0' });
    expect(pi.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    const [entry] = sandbox.admin.ledger().stripe.paymentIntents;
    expect(entry?.idempotencyKey).toBe('run1:0');
  });

  it('replays the same key with Idempotent-Replayed and creates nothing new', async () => {
    const first = await charge('run1:1');
    const again = await charge('run1:1');
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(sandbox.admin.ledger().stripe.paymentIntents).toHaveLength(1);
  });

  it('refuses the same key with other parameters with a StripeIdempotencyError', async () => {
    await charge('run1:2', 2_500);
    const error = await charge('run1:2', 2_600).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect((error as Stripe.errors.StripeError).statusCode).toBe(400);
    expect(sandbox.admin.ledger().stripe.paymentIntents).toHaveLength(1);
  });

  it('answers 409 idempotency_key_in_use while the first request is in flight, saving nothing for it', async () => {
    sandbox.admin.addFault({
      vendor: 'stripe',
      method: 'POST',
      path: '/v1/payment_intents',
      nth: 1,
      kind: 'delay',
      delayMs: 400,
      phase: 'during_processing',
    });
    const first = charge('run1:3');
    await new Promise((r) => setTimeout(r, 100));
    const error = await charge('run1:3').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeError);
    expect((error as Stripe.errors.StripeError).statusCode).toBe(409);
    expect((error as Stripe.errors.StripeError).code).toBe('idempotency_key_in_use');
    const done = await first;
    const replay = await charge('run1:3');
    expect(replay.id).toBe(done.id);
    expect(sandbox.admin.ledger().stripe.paymentIntents).toHaveLength(1);
  });

  it('rejects a bad key with 401 and Stripe error body', async () => {
    const error = await client('sk_test_wrong')
      .paymentIntents.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect((error as Stripe.errors.StripeError).message).toMatch(/Invalid API Key provided: sk_test_\*+rong/);
  });

  it('hides new PaymentIntents from search until the lag passes, while list and retrieve see them', async () => {
    const pi = await charge('run1:4');
    const query = `metadata['saga_key']:'run1:4'`;
    const early = await stripe.paymentIntents.search({ query });
    expect(early.object).toBe('search_result');
    expect(early.data).toHaveLength(0);
    expect((await stripe.paymentIntents.list()).data.map((p) => p.id)).toContain(pi.id);
    expect((await stripe.paymentIntents.retrieve(pi.id)).status).toBe('succeeded');
    await new Promise((r) => setTimeout(r, 350));
    const late = await stripe.paymentIntents.search({ query });
    expect(late.data.map((p) => p.id)).toEqual([pi.id]);
    expect(late.has_more).toBe(false);
    expect(late.url).toBe('/v1/payment_intents/search');
  });

  it('caps refunds at the amount received', async () => {
    const pi = await charge('run1:5', 3_000);
    const partial = await stripe.refunds.create(
      { payment_intent: pi.id, amount: 1_000, metadata: { saga_key: 'c:5' } },
      { idempotencyKey: 'c:5' },
    );
    expect(partial.status).toBe('succeeded');
    const tooMuch = await stripe.refunds
      .create({ payment_intent: pi.id, amount: 2_500 })
      .catch((e: unknown) => e);
    expect((tooMuch as Stripe.errors.StripeError).code).toBe('amount_too_large');
    await stripe.refunds.create({ payment_intent: pi.id });
    const again = await stripe.refunds.create({ payment_intent: pi.id }).catch((e: unknown) => e);
    expect((again as Stripe.errors.StripeError).code).toBe('charge_already_refunded');
    const refunds = await stripe.refunds.list({ payment_intent: pi.id });
    expect(refunds.data.map((r) => r.amount)).toEqual([2_000, 1_000]);
    expect(refunds.data[1]?.metadata).toEqual({ saga_key: 'c:5' });
  });

  it('authorizes with manual capture, then cancels; illegal moves are payment_intent_unexpected_state', async () => {
    const pi = await stripe.paymentIntents.create(
      {
        amount: 5_000,
        currency: 'usd',
        customer: 'cus_sandbox_ada',
        confirm: true,
        off_session: true,
        capture_method: 'manual',
      },
      { idempotencyKey: 'auth:1' },
    );
    expect(pi.status).toBe('requires_capture');
    expect(pi.amount_capturable).toBe(5_000);
    const canceled = await stripe.paymentIntents.cancel(pi.id);
    expect(canceled.status).toBe('canceled');
    const error = await stripe.paymentIntents.capture(pi.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((error as Stripe.errors.StripeError).code).toBe('payment_intent_unexpected_state');

    const held = await stripe.paymentIntents.create({
      amount: 5_000,
      currency: 'usd',
      customer: 'cus_sandbox_ada',
      confirm: true,
      capture_method: 'manual',
    });
    const captured = await stripe.paymentIntents.capture(held.id, {}, { idempotencyKey: 'cap:1' });
    expect(captured.status).toBe('succeeded');
    expect(captured.amount_received).toBe(5_000);
  });

  it('declines a card with a 402 card_error, leaving the PaymentIntent in requires_payment_method', async () => {
    const error = await stripe.paymentIntents
      .create(
        {
          amount: 1_000,
          currency: 'usd',
          customer: 'cus_sandbox_declined',
          confirm: true,
          off_session: true,
        },
        { idempotencyKey: 'dec:1' },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect((error as Stripe.errors.StripeCardError).decline_code).toBe('generic_decline');
    expect(sandbox.admin.ledger().stripe.paymentIntents[0]?.status).toBe('requires_payment_method');
  });

  it('rejects unknown parameters and creates customers', async () => {
    const customer = await stripe.customers.create({
      email: 'new@example.com',
      invoice_settings: { default_payment_method: 'pm_card_visa' },
    });
    expect(customer.id).toMatch(/^cus_/);
    const pi = await stripe.paymentIntents.create({
      amount: 900,
      currency: 'usd',
      customer: customer.id,
      confirm: true,
      expand: ['latest_charge'],
    });
    expect((pi.latest_charge as Stripe.Charge).amount_captured).toBe(900);
    const error = await stripe.paymentIntents
      .create({ amount: 900, currency: 'usd', bogus: 'x' } as Stripe.PaymentIntentCreateParams)
      .catch((e: unknown) => e);
    expect((error as Stripe.errors.StripeError).code).toBe('parameter_unknown');
  });
});
