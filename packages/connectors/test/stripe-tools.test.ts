import {
  answeredUnderKey,
  ClientError,
  classifyToolError,
  compensationKey,
  createToolRegistry,
  isRefusedUnderKey,
  isStepRef,
  StepStatus,
  type RefusedUnderKey,
  type ToolEffect,
} from '@agent-saga/core';
import { startSandbox, stripePartialBatchFault, type RunningSandbox } from '@agent-saga/sandbox';
import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createStripeTools,
  StripeOutcomeUnknownError,
  VendorIdempotencyMismatchError,
  type StripeTools,
} from '../src/index.js';
import { rejectionOf, sandboxStripeConfig, sleep, stepContext } from './stripe-test-kit.js';
import { effectOf } from './support/effect-of.js';

/** Why 300 ms: short enough for a fast suite, long enough that "right after the write" is inside it. */
const SEARCH_LAG_MS = 300;

let sandbox: RunningSandbox;
let tools: StripeTools;

beforeAll(async () => {
  sandbox = await startSandbox({ settings: { stripeSearchLagMs: SEARCH_LAG_MS } });
  tools = createStripeTools(sandboxStripeConfig(sandbox, { STRIPE_LOOKUP_LAG_MS: String(SEARCH_LAG_MS) }));
});
afterAll(async () => sandbox.close());
beforeEach(() => sandbox.admin.reset());

const ledger = () => sandbox.admin.ledger().stripe;
const afterLag = () => sleep(SEARCH_LAG_MS + 100);
const pick = (c: typeof charge) => ({ amount: c.amount, currency: c.currency, customer: c.customerId });
const charge = {
  customerId: 'cus_sandbox_ada',
  amount: 2_500,
  currency: 'usd',
  reason: 'Order #1182 refund',
};

/** A lookup's answer read as a refusal under the key: anything else (an effect, null) fails the test here. */
function refusalOf(answer: ToolEffect | RefusedUnderKey | null | undefined): ClientError {
  if (!isRefusedUnderKey(answer))
    throw new Error(`expected a refusal under the key, got ${JSON.stringify(answer)}`);
  return answer.refused;
}

describe('charge_card', () => {
  it('charges off-session; the step key reaches Stripe as Idempotency-Key and metadata.saga_key', async () => {
    const ctx = stepContext('charge_card');
    const args = tools.charge_card.args.parse({ ...charge, receiptEmail: 'ada@example.com' });
    const effect = await tools.charge_card.execute(args, ctx);

    expect(effect.externalRef).toMatch(/^pi_/);
    expect(effect.result).toMatchObject({ status: 'succeeded', amount: 2_500, amountReceived: 2_500 });
    expect(ledger().paymentIntents).toMatchObject([
      {
        id: effect.externalRef,
        status: 'succeeded',
        amount_received: 2_500,
        customer: 'cus_sandbox_ada',
        description: 'Order #1182 refund',
        receipt_email: 'ada@example.com',
        metadata: { saga_key: ctx.idempotencyKey },
        idempotencyKey: ctx.idempotencyKey,
      },
    ]);
    const posts = sandbox.admin.requests().filter((r) => r.method === 'POST');
    expect(posts.map((r) => [r.path, r.idempotencyKey])).toEqual([
      ['/v1/payment_intents', ctx.idempotencyKey],
    ]);
  });

  it('is seen by the customer only with a receipt: audience, correction and compensation follow', () => {
    const withReceipt = tools.charge_card.args.parse({ ...charge, receiptEmail: 'ada@example.com' });
    const without = tools.charge_card.args.parse(charge);
    expect(tools.charge_card.audience(withReceipt)).toEqual(['customer']);
    expect(tools.charge_card.audience(without)).toEqual(['finance']);
    expect(tools.charge_card.correction?.(withReceipt, 'k1')).toEqual({
      template: 'charge_refunded_note',
      to: 'ada@example.com',
      vars: { amount: 2_500, currency: 'usd', reason: 'Order #1182 refund' },
    });
    expect(tools.charge_card.correction?.(without, 'k1')).toBeNull();
    const comp = tools.charge_card.compensate?.(without, 'k1');
    expect(comp?.tool).toBe('refund');
    expect(isStepRef(comp?.args.payment)).toBe(true);
    expect(comp?.args.payment).toEqual({ $ref: 'k1' });
  });

  it('sends no receipt_email when none is given', async () => {
    await tools.charge_card.execute(tools.charge_card.args.parse(charge), stepContext('charge_card'));
    expect(ledger().paymentIntents[0]?.receipt_email).toBeNull();
  });

  it('a decline is a ClientError (FAILED), with Stripe status and code', async () => {
    const args = tools.charge_card.args.parse({ ...charge, customerId: 'cus_sandbox_declined' });
    const err = await rejectionOf(tools.charge_card.execute(args, stepContext('charge_card')));
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).details).toMatchObject({ status: 402, vendorCode: 'card_declined' });
    expect(classifyToolError(err).status).toBe(StepStatus.FAILED);
  });

  it('the lookup finds a declined PaymentIntent under the key refused as the 402 said: no money moved', async () => {
    const ctx = stepContext('charge_card');
    const args = tools.charge_card.args.parse({ ...charge, customerId: 'cus_sandbox_declined' });
    const answered = await rejectionOf(tools.charge_card.execute(args, ctx));
    expect(answered).toBeInstanceOf(ClientError);
    const [pi] = ledger().paymentIntents;
    expect(ledger().paymentIntents).toHaveLength(1);
    expect(pi?.status).toBe('requires_payment_method');
    await afterLag();
    const refused = refusalOf(await tools.charge_card.lookup?.(ctx.idempotencyKey, ctx));
    // The step's error reads the same whether the executor saw the 402 or the lookup found the decline.
    const { status, vendorCode, declineCode } = (answered as ClientError).details;
    expect(status).toBe(402);
    expect(refused.details).toMatchObject({ status, vendorCode, paymentIntent: pi?.id });
    if (declineCode !== undefined) expect(refused.details.declineCode).toBe(declineCode);
  });

  it('an unknown customer is a ClientError (404)', async () => {
    const args = tools.charge_card.args.parse({ ...charge, customerId: 'cus_nobody' });
    const err = await rejectionOf(tools.charge_card.execute(args, stepContext('charge_card')));
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).details.status).toBe(404);
    expect(ledger().paymentIntents).toHaveLength(0);
  });
});

describe('a 504 after the charge was made', () => {
  it('is UNKNOWN; the retry with the same key replays (one PaymentIntent); lookup finds it after the lag', async () => {
    sandbox.admin.addFault({
      vendor: 'stripe',
      method: 'POST',
      path: '/v1/payment_intents',
      nth: 1,
      kind: 'error_after',
    });
    const ctx = stepContext('charge_card');
    const args = tools.charge_card.args.parse(charge);

    const err = await rejectionOf(tools.charge_card.execute(args, ctx));
    expect(err).toBeInstanceOf(StripeOutcomeUnknownError);
    expect(err).not.toBeInstanceOf(ClientError);
    expect(classifyToolError(err)).toMatchObject({
      status: StepStatus.UNKNOWN,
      error: { code: 'OUTCOME_UNKNOWN' },
    });
    expect(ledger().paymentIntents).toHaveLength(1);

    const retried = await tools.charge_card.execute(args, { ...ctx, attempt: 2 });
    expect(ledger().paymentIntents).toHaveLength(1);
    expect(retried.externalRef).toBe(ledger().paymentIntents[0]?.id);
    expect(sandbox.admin.requests().filter((r) => r.replayed)).toHaveLength(1);

    await afterLag();
    const found = effectOf(await tools.charge_card.lookup?.(ctx.idempotencyKey, ctx));
    expect(found?.externalRef).toBe(retried.externalRef);
    expect(found?.duplicates).toBeUndefined();
  });

  it('a Stripe-shaped 504 keeps its status in the stored error', async () => {
    sandbox.admin.addFault({
      vendor: 'stripe',
      method: 'POST',
      path: '/v1/payment_intents',
      nth: 1,
      kind: 'error_after',
      status: 504,
      body: { error: { type: 'api_error', message: 'gateway timeout' } },
    });
    const ctx = stepContext('charge_card');
    expect(ctx.attempt).toBe(1);
    const err = await rejectionOf(tools.charge_card.execute(tools.charge_card.args.parse(charge), ctx));
    // Stamped with the attempt Stripe answered, as any answer is; only a 500 lets a refusal be believed early.
    const stored = classifyToolError(err);
    expect(stored).toMatchObject({ status: StepStatus.UNKNOWN, error: { status: 504, attempt: 1 } });
    expect(answeredUnderKey(tools.charge_card, { attempts: 1, error: { ...stored.error } })).toBe(false);
  });

  it('a reset after commit is absorbed by the client retry, which the key turns into a replay', async () => {
    sandbox.admin.addFault({
      vendor: 'stripe',
      method: 'POST',
      path: '/v1/payment_intents',
      nth: 1,
      kind: 'reset_after',
    });
    const effect = await tools.charge_card.execute(
      tools.charge_card.args.parse(charge),
      stepContext('charge_card'),
    );
    expect(ledger().paymentIntents.map((p) => p.id)).toEqual([effect.externalRef]);
  });
});

describe('a PaymentIntent created under the key but never confirmed (partial_batch)', () => {
  /**
   * Stripe creates the PaymentIntent, never runs its confirmation, answers 500 and saves that 500 under the
   * key: the call can never make the charge, and no re-send under the key will.
   */
  const armPartialBatch = () => sandbox.admin.addFault(stripePartialBatchFault());

  /**
   * Both sends (attempts 1 and 2) fail UNKNOWN, each stored as the 500 Stripe answered to that attempt, then
   * the lookup, after the lag, names the one PaymentIntent left incomplete.
   */
  async function expectRefusedUnderKey(
    tool: Parameters<typeof answeredUnderKey>[0],
    send: (attempt: number) => Promise<unknown>,
    lookup: () => Promise<ToolEffect | RefusedUnderKey | null | undefined>,
  ) {
    armPartialBatch();
    const first = await rejectionOf(send(1));
    expect(first).not.toBeInstanceOf(ClientError);
    const stored = classifyToolError(first);
    expect(stored).toMatchObject({ status: StepStatus.UNKNOWN, error: { status: 500, attempt: 1 } });
    // What the reconciler reads off the row: the last attempt was answered 500 under the key.
    expect(answeredUnderKey(tool, { attempts: 1, error: { ...stored.error } })).toBe(true);
    // The re-send under the same key is told the saved 500: it fails the same way, and makes nothing.
    const second = await rejectionOf(send(2));
    expect(second).not.toBeInstanceOf(ClientError);
    expect(classifyToolError(second)).toMatchObject({
      status: StepStatus.UNKNOWN,
      error: { status: 500, attempt: 2 },
    });
    const [pi, ...more] = ledger().paymentIntents;
    expect(more).toHaveLength(0);
    expect(pi?.status).toBe('requires_confirmation');

    await afterLag();
    const refused = refusalOf(await lookup());
    expect(refused.message).toContain(pi!.id);
    expect(refused.message).toContain('requires_confirmation');
    expect(refused.details).toMatchObject({
      vendorCode: 'payment_intent_requires_confirmation',
      paymentIntent: pi!.id,
    });
    // What the step's error would read, had the executor seen the PaymentIntent in Stripe's answer.
    expect(classifyToolError(refused).status).toBe(StepStatus.FAILED);
  }

  it('charge_card: the sends are UNKNOWN and the lookup finds the call refused under the key', async () => {
    const ctx = stepContext('charge_card');
    const args = tools.charge_card.args.parse(charge);
    await expectRefusedUnderKey(
      tools.charge_card,
      (attempt) => tools.charge_card.execute(args, { ...ctx, attempt }),
      () => tools.charge_card.lookup!(ctx.idempotencyKey, ctx),
    );
  });

  it('authorize_payment: the same, for a hold that was never placed', async () => {
    const ctx = stepContext('authorize_payment');
    const args = tools.authorize_payment.args.parse(charge);
    await expectRefusedUnderKey(
      tools.authorize_payment,
      (attempt) => tools.authorize_payment.execute(args, { ...ctx, attempt }),
      () => tools.authorize_payment.lookup!(ctx.idempotencyKey, ctx),
    );
  });
});

describe('lookup and search lag', () => {
  it('returns null right after the write and the PaymentIntent once the lag has passed', async () => {
    sandbox.admin.configure({ stripeSearchLagMs: 1_500 });
    const lagged = createStripeTools(sandboxStripeConfig(sandbox, { STRIPE_LOOKUP_LAG_MS: '1500' }));
    expect(lagged.charge_card.lookupLagMs).toBe(1_500);
    expect(lagged.refund.lookupLagMs).toBe(1_500);
    const ctx = stepContext('charge_card');
    const effect = await lagged.charge_card.execute(lagged.charge_card.args.parse(charge), ctx);

    // Absence is not proof: the write is not visible to search yet.
    expect(await lagged.charge_card.lookup?.(ctx.idempotencyKey, ctx)).toBeNull();
    await sleep(1_600);
    const found = effectOf(await lagged.charge_card.lookup?.(ctx.idempotencyKey, ctx));
    expect(found?.externalRef).toBe(effect.externalRef);
    expect(found?.result).toMatchObject({ status: 'succeeded', amount: 2_500 });
  });

  it('defaults lookupLagMs to 60 s (Stripe search lags up to a minute)', () => {
    const config = sandboxStripeConfig(sandbox);
    expect(createStripeTools(config).charge_card.lookupLagMs).toBe(60_000);
  });

  it('reports the oldest PaymentIntent and lists duplicates when one key matches several', async () => {
    // Only possible once Stripe forgot the key (24 h); made here by writing the metadata directly.
    const stripe = new Stripe(sandbox.credentials.stripeSecretKey, {
      host: sandbox.host,
      port: sandbox.ports.stripe,
      protocol: 'http',
      maxNetworkRetries: 0,
    });
    const ctx = stepContext('charge_card');
    const make = (n: number) =>
      stripe.paymentIntents.create(
        { ...pick(charge), confirm: true, off_session: true, metadata: { saga_key: ctx.idempotencyKey } },
        { idempotencyKey: `${ctx.idempotencyKey}-${n}` },
      );
    const first = await make(1);
    const second = await make(2);
    await afterLag();
    const found = effectOf(await tools.charge_card.lookup?.(ctx.idempotencyKey, ctx));
    expect(found?.externalRef).toBe(first.id);
    expect(found?.duplicates).toEqual([first.id, second.id]);
  });

  it('returns null for a key that was never used', async () => {
    const ctx = stepContext('charge_card');
    expect(await tools.charge_card.lookup?.(ctx.idempotencyKey, ctx)).toBeNull();
    expect(await tools.refund.lookup?.(ctx.idempotencyKey, ctx)).toBeNull();
  });
});

describe("Stripe's idempotency errors", () => {
  it('the same key with other parameters is VENDOR_IDEMPOTENCY_MISMATCH: UNKNOWN, not FAILED', async () => {
    const ctx = stepContext('charge_card');
    await tools.charge_card.execute(tools.charge_card.args.parse(charge), ctx);
    const err = await rejectionOf(
      tools.charge_card.execute(tools.charge_card.args.parse({ ...charge, amount: 2_600 }), ctx),
    );
    expect(err).toBeInstanceOf(VendorIdempotencyMismatchError);
    expect(err).not.toBeInstanceOf(ClientError);
    expect(classifyToolError(err)).toMatchObject({
      status: StepStatus.UNKNOWN,
      error: { code: 'VENDOR_IDEMPOTENCY_MISMATCH', status: 400 },
    });
    expect(ledger().paymentIntents).toHaveLength(1);
  });

  it('the same key while the first request is in flight is UNKNOWN (409), and saves nothing', async () => {
    sandbox.admin.addFault({
      vendor: 'stripe',
      method: 'POST',
      path: '/v1/payment_intents',
      nth: 1,
      kind: 'delay',
      delayMs: 500,
      phase: 'during_processing',
    });
    const ctx = stepContext('charge_card');
    const args = tools.charge_card.args.parse(charge);
    const first = tools.charge_card.execute(args, ctx);
    await sleep(150);
    const err = await rejectionOf(tools.charge_card.execute(args, ctx));
    expect(err).toBeInstanceOf(StripeOutcomeUnknownError);
    expect(classifyToolError(err)).toMatchObject({
      status: StepStatus.UNKNOWN,
      error: { status: 409, vendorCode: 'idempotency_key_in_use' },
    });
    const done = await first;
    expect(ledger().paymentIntents.map((p) => p.id)).toEqual([done.externalRef]);
  });

  it('an abort while waiting is UNKNOWN at once', async () => {
    sandbox.admin.addFault({
      vendor: 'stripe',
      method: 'POST',
      path: '/v1/payment_intents',
      nth: 1,
      kind: 'delay',
      delayMs: 1_000,
    });
    const controller = new AbortController();
    const pending = tools.charge_card.execute(
      tools.charge_card.args.parse(charge),
      stepContext('charge_card', { signal: controller.signal }),
    );
    setTimeout(() => controller.abort(new Error('tool timeout')), 100);
    const err = await rejectionOf(pending);
    expect(err).toBeInstanceOf(StripeOutcomeUnknownError);
    const stored = classifyToolError(err);
    expect(stored.status).toBe(StepStatus.UNKNOWN);
    // Nothing answered attempt 1 (its context says attempt 1): no status, so no attempt is stamped.
    expect(stored.error).not.toHaveProperty('status');
    expect(stored.error).not.toHaveProperty('attempt');
    // The request went on at Stripe: that is what UNKNOWN means (and it must not leak into the next test).
    await sleep(1_000);
    expect(ledger().paymentIntents).toHaveLength(1);
  });
});

describe('authorize_payment, capture_payment, cancel_authorization', () => {
  it('authorizes (hold), captures under its own key, and both are found by lookup', async () => {
    const runId = `run-auth-${Date.now()}`;
    const authCtx = stepContext('authorize_payment', { runId, stepIdx: 0 });
    const auth = await tools.authorize_payment.execute(tools.authorize_payment.args.parse(charge), authCtx);
    expect(auth.result).toMatchObject({ status: 'requires_capture', amountCapturable: 2_500 });
    expect(tools.authorize_payment.compensate?.(charge, authCtx.idempotencyKey)).toEqual({
      tool: 'cancel_authorization',
      args: { authorization: { $ref: authCtx.idempotencyKey } },
    });

    const captureArgs = tools.capture_payment.args.parse({ paymentIntent: auth.externalRef });
    const capCtx = stepContext('capture_payment', { runId, stepIdx: 1 });
    const captured = await tools.capture_payment.execute(captureArgs, capCtx);
    expect(captured.externalRef).toBe(auth.externalRef);
    expect(captured.result).toMatchObject({ status: 'succeeded', amountReceived: 2_500 });
    expect(ledger().paymentIntents).toMatchObject([
      { id: auth.externalRef, status: 'succeeded', capture_method: 'manual', amount_received: 2_500 },
    ]);
    const keys = sandbox.admin
      .requests()
      .filter((r) => r.method === 'POST')
      .map((r) => r.idempotencyKey);
    expect(keys).toEqual([authCtx.idempotencyKey, capCtx.idempotencyKey]);
    expect(tools.capture_payment.compensate?.(captureArgs, capCtx.idempotencyKey)).toEqual({
      tool: 'refund',
      args: { payment: auth.externalRef },
    });

    await afterLag();
    expect(effectOf(await tools.capture_payment.lookup?.(capCtx.idempotencyKey, capCtx))?.externalRef).toBe(
      auth.externalRef,
    );
    expect(
      effectOf(await tools.authorize_payment.lookup?.(authCtx.idempotencyKey, authCtx))?.externalRef,
    ).toBe(auth.externalRef);
  });

  it('cancel_authorization releases the hold under the compensation key; lookup finds it', async () => {
    const runId = `run-cancel-${Date.now()}`;
    const authCtx = stepContext('authorize_payment', { runId });
    const auth = await tools.authorize_payment.execute(tools.authorize_payment.args.parse(charge), authCtx);
    const key = compensationKey(runId, 0, 'authorize_payment');
    const ctx = stepContext('cancel_authorization', { runId, key });

    // Before the cancel: the compensation's lookup finds nothing.
    await afterLag();
    expect(await tools.cancel_authorization.lookup?.(key, ctx)).toBeNull();

    const canceled = await tools.cancel_authorization.execute(
      tools.cancel_authorization.args.parse({ authorization: auth.externalRef }),
      ctx,
    );
    expect(canceled.result).toMatchObject({ status: 'canceled' });
    expect(ledger().paymentIntents).toMatchObject([{ id: auth.externalRef, status: 'canceled' }]);
    const cancelPost = sandbox.admin.requests().find((r) => r.path.endsWith('/cancel'));
    expect(cancelPost?.idempotencyKey).toBe(key);

    await afterLag();
    expect(effectOf(await tools.cancel_authorization.lookup?.(key, ctx))?.externalRef).toBe(auth.externalRef);
    // The authorization did happen, even though it is released now.
    expect(
      effectOf(await tools.authorize_payment.lookup?.(authCtx.idempotencyKey, authCtx))?.externalRef,
    ).toBe(auth.externalRef);
  });

  it('cancelling an authorization that is already released reports it released', async () => {
    const auth = await tools.authorize_payment.execute(
      tools.authorize_payment.args.parse(charge),
      stepContext('authorize_payment'),
    );
    const args = tools.cancel_authorization.args.parse({ authorization: auth.externalRef });
    await tools.cancel_authorization.execute(args, stepContext('cancel_authorization'));
    const again = await tools.cancel_authorization.execute(args, stepContext('cancel_authorization'));
    expect(again.result).toMatchObject({ status: 'canceled' });
  });

  it('cancelling a captured payment is a ClientError: the hold became a charge', async () => {
    const auth = await tools.authorize_payment.execute(
      tools.authorize_payment.args.parse(charge),
      stepContext('authorize_payment'),
    );
    await tools.capture_payment.execute(
      { paymentIntent: auth.externalRef ?? '' },
      stepContext('capture_payment'),
    );
    const err = await rejectionOf(
      tools.cancel_authorization.execute(
        { authorization: auth.externalRef ?? '' },
        stepContext('cancel_authorization'),
      ),
    );
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).details.vendorCode).toBe('payment_intent_unexpected_state');
  });
});

describe('refund', () => {
  it('refunds under the compensation key (header and metadata); lookup finds the refund', async () => {
    const runId = `run-refund-${Date.now()}`;
    const charged = await tools.charge_card.execute(
      tools.charge_card.args.parse(charge),
      stepContext('charge_card', { runId }),
    );
    const key = compensationKey(runId, 0, 'charge_card');
    const ctx = stepContext('refund', { runId, key });
    const args = tools.refund.args.parse({ payment: charged.externalRef });

    const refunded = await tools.refund.execute(args, ctx);
    expect(refunded.externalRef).toMatch(/^re_/);
    expect(refunded.result).toMatchObject({ paymentIntent: charged.externalRef, amount: 2_500 });
    expect(ledger().refunds).toMatchObject([
      {
        id: refunded.externalRef,
        payment_intent: charged.externalRef,
        amount: 2_500,
        metadata: { saga_key: key },
        idempotencyKey: key,
      },
    ]);
    expect(ledger().paymentIntents[0]?.amount_refunded).toBe(2_500);

    // A retry of the compensation replays: still one refund.
    await tools.refund.execute(args, { ...ctx, attempt: 2 });
    expect(ledger().refunds).toHaveLength(1);

    await afterLag();
    const found = effectOf(await tools.refund.lookup?.(key, ctx));
    expect(found?.externalRef).toBe(refunded.externalRef);
    expect(found?.duplicates).toBeUndefined();
  });

  it('a partial refund, then one beyond what is left, is a ClientError (amount_too_large)', async () => {
    const charged = await tools.charge_card.execute(
      tools.charge_card.args.parse({ ...charge, amount: 3_000 }),
      stepContext('charge_card'),
    );
    const payment = charged.externalRef ?? '';
    await tools.refund.execute({ payment, amount: 1_000 }, stepContext('refund'));
    const err = await rejectionOf(tools.refund.execute({ payment, amount: 2_500 }, stepContext('refund')));
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).details).toMatchObject({ status: 400, vendorCode: 'amount_too_large' });
    expect(classifyToolError(err).status).toBe(StepStatus.FAILED);
    expect(ledger().refunds.map((r) => r.amount)).toEqual([1_000]);
  });

  it('a refund whose marker was written but whose refund was refused is not found', async () => {
    const charged = await tools.charge_card.execute(
      tools.charge_card.args.parse(charge),
      stepContext('charge_card'),
    );
    const ctx = stepContext('refund');
    await rejectionOf(tools.refund.execute({ payment: charged.externalRef ?? '', amount: 9_999 }, ctx));
    await afterLag();
    expect(await tools.refund.lookup?.(ctx.idempotencyKey, ctx)).toBeNull();
  });
});

describe('registration', () => {
  it('registers with the core registry; compensations name registered tools', () => {
    const registry = createToolRegistry(Object.values(tools));
    expect(
      registry
        .list()
        .map((t) => [t.name, t.class])
        .sort(),
    ).toEqual([
      ['authorize_payment', 'compensatable'],
      ['cancel_authorization', 'irreversible'],
      ['capture_payment', 'compensatable'],
      ['charge_card', 'compensatable'],
      ['refund', 'irreversible'],
    ]);
    expect(() => createToolRegistry([tools.charge_card])).toThrow(/refund/);
  });

  it('a wrong secret key is a ClientError (401), nothing happened', async () => {
    const wrong = createStripeTools(sandboxStripeConfig(sandbox, { STRIPE_SECRET_KEY: 'sk_test_wrong' }));
    const err = await rejectionOf(
      wrong.charge_card.execute(wrong.charge_card.args.parse(charge), stepContext('charge_card')),
    );
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).details.status).toBe(401);
    expect(ledger().paymentIntents).toHaveLength(0);
  });
});

describe('the precondition of a charge, before its refund', () => {
  async function charged() {
    const ctx = stepContext('charge_card');
    const effect = await tools.charge_card.execute(tools.charge_card.args.parse(charge), ctx);
    return { ctx, effect };
  }
  /** Someone refunds the PaymentIntent outside this step (the dashboard, another system): another key. */
  const refundElsewhere = (pi: string, amount?: number) =>
    tools.refund.execute(
      tools.refund.args.parse({ payment: pi, ...(amount === undefined ? {} : { amount }) }),
      stepContext('refund'),
    );

  it('as left: nothing refunded, so the refund may be sent', async () => {
    const { ctx, effect } = await charged();
    await expect(tools.charge_card.precondition!(effect, ctx)).resolves.toBe('as_left');
  });

  it('refunded in full elsewhere: already compensated, no second refund', async () => {
    const { ctx, effect } = await charged();
    await refundElsewhere(effect.externalRef!);
    await expect(tools.charge_card.precondition!(effect, ctx)).resolves.toBe('already_compensated');
    expect(ledger().refunds).toHaveLength(1);
  });

  it('partly refunded elsewhere: changed, a person decides about the rest', async () => {
    const { ctx, effect } = await charged();
    await refundElsewhere(effect.externalRef!, 1_000);
    await expect(tools.charge_card.precondition!(effect, ctx)).resolves.toEqual({
      changed: expect.stringContaining('partly refunded elsewhere: 1000 of 2500') as string,
    });
  });

  it('capture_payment reads its PaymentIntent the same way', async () => {
    const hold = await tools.authorize_payment.execute(
      tools.authorize_payment.args.parse(charge),
      stepContext('authorize_payment'),
    );
    const ctx = stepContext('capture_payment');
    const captured = await tools.capture_payment.execute(
      tools.capture_payment.args.parse({ paymentIntent: hold.externalRef }),
      ctx,
    );
    await expect(tools.capture_payment.precondition!(captured, ctx)).resolves.toBe('as_left');
    await refundElsewhere(hold.externalRef!);
    await expect(tools.capture_payment.precondition!(captured, ctx)).resolves.toBe('already_compensated');
  });
  it("a hold: released while held, no more once released, or captured and that charge refunded in full; a person's once captured and kept", async () => {
    const hold = async () => {
      const ctx = stepContext('authorize_payment');
      const effect = await tools.authorize_payment.execute(tools.authorize_payment.args.parse(charge), ctx);
      return { ctx, effect, pi: effect.externalRef! };
    };
    const capture = (pi: string) =>
      tools.capture_payment.execute(
        tools.capture_payment.args.parse({ paymentIntent: pi }),
        stepContext('capture_payment'),
      );
    const held = await hold();
    await expect(tools.authorize_payment.precondition!(held.effect, held.ctx)).resolves.toBe('as_left');
    await tools.cancel_authorization.execute(
      tools.cancel_authorization.args.parse({ authorization: held.pi }),
      stepContext('cancel_authorization'),
    );
    await expect(tools.authorize_payment.precondition!(held.effect, held.ctx)).resolves.toBe(
      'already_compensated',
    );

    const captured = await hold();
    await capture(captured.pi);
    await expect(tools.authorize_payment.precondition!(captured.effect, captured.ctx)).resolves.toEqual({
      changed: expect.stringContaining('was captured (2500 usd, 0 refunded)') as string,
    });
    await refundElsewhere(captured.pi, 1_000);
    await expect(tools.authorize_payment.precondition!(captured.effect, captured.ctx)).resolves.toEqual({
      changed: expect.stringContaining('1000 refunded') as string,
    });
    await refundElsewhere(captured.pi);
    await expect(tools.authorize_payment.precondition!(captured.effect, captured.ctx)).resolves.toBe(
      'already_compensated',
    );
  });
});
