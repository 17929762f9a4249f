/**
 * The business invariant of `refund_and_reship`, checked against the sandbox's Stripe and warehouse before
 * a bound run ends, through the real product (api, relay, executor, reconciler and compensator processes,
 * the real connectors and their lookups), and the gauges by definition that count what happened:
 *
 * - a completed run verifies (one live reship, one charge not refunded) and ends COMPLETED;
 * - a run whose charge a person refunded directly in Stripe, then unwound, still verifies (the refund is
 *   the person's, the compensator's refund is skipped): COMPENSATED;
 * - a run unwound after a person created a shipment for its order directly at the warehouse does not: it
 *   ends PARTIALLY_COMPENSATED with the failed clause (naming the shipment) in `statusReason`, and a case;
 * - `saga_definition_*` and `saga_invariant_*` show these runs under `definition="refund_and_reship"` and
 *   the unbound run under `definition="none"`.
 *
 * Each run has its own order (seeded here): the invariant reads every shipment of the run's order, whoever
 * made it, so runs on one order would see each other's reships.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from '@agent-saga/client';
import { CHARGE_AMOUNT, callUntilSettled } from './fixtures/support-flow.js';
import { startSupportHarness, type SupportHarness } from './fixtures/support-harness.js';

const DEFINITION = 'refund_and_reship';
let h: SupportHarness;

beforeAll(async () => {
  h = await startSupportHarness('invariant', ['relay', 'executor', 'reconciler', 'compensator']);
  h.sandbox.admin.seed({
    orders: ['7001', '7002', '7003', '7004'].map((id) => ({
      id,
      customerId: 'cus_sandbox_ada',
      items: [{ sku: 'TEE-L', quantity: 1 }],
      eligibleForReship: true,
    })),
  });
}, 120_000);

afterAll(async () => {
  await h?.close();
});

/** A run bound to `refund_and_reship`, played forward: ticket, charge, reship, each CONFIRMED. */
async function playForward(runId: string, orderId: string): Promise<RunView> {
  await h.saga.createRun({ runId, definition: { name: DEFINITION } });
  const steps = [
    { tool: 'create_ticket', args: { summary: `Refund for order #${orderId}`, orderId } },
    {
      tool: 'charge_card',
      args: {
        customerId: 'cus_sandbox_ada',
        amount: CHARGE_AMOUNT,
        currency: 'eur',
        reason: `order ${orderId}`,
      },
    },
    {
      tool: 'reship',
      args: { orderId, items: [{ sku: 'TEE-L', quantity: 1 }], reason: `Replacement for order ${orderId}` },
    },
  ];
  for (const [i, step] of steps.entries()) {
    const outcome = await callUntilSettled(() =>
      h.saga.call(runId, step.tool, step.args, { stepIdx: i, waitMs: 5_000 }),
    );
    expect(outcome.status, `${step.tool}`).toBe('CONFIRMED');
  }
  const run = await h.saga.getRun(runId);
  expect(run.definition).toEqual({ name: DEFINITION, version: 1 });
  return run;
}

const refOf = (run: RunView, tool: string): string => {
  const ref = run.steps.find((s) => s.tool === tool)?.externalRef;
  if (!ref) throw new Error(`run ${run.runId} has no ${tool} effect`);
  return ref;
};

/** A person at the vendors, with the sandbox's own keys: no saga key on anything they make. */
async function personRefunds(paymentIntent: string): Promise<void> {
  const r = await fetch(`${h.sandbox.urls.stripe}/v1/refunds`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${h.sandbox.credentials.stripeSecretKey}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ payment_intent: paymentIntent }).toString(),
  });
  expect(r.status).toBe(200);
}

async function personShips(orderId: string): Promise<string> {
  const r = await fetch(`${h.sandbox.urls.shipping}/v1/shipments`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${h.sandbox.credentials.shippingApiKey}`,
      'content-type': 'application/json',
      // The warehouse API requires a key on every create; the person's own, no saga's.
      'idempotency-key': `by-hand-${orderId}`,
    },
    body: JSON.stringify({ orderId, items: [{ sku: 'TEE-L', quantity: 1 }], reason: 'sent by hand' }),
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { id: string }).id;
}

async function waitUntil(done: () => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The API's `/metrics`, as `name{labels}` → value. */
async function scrape(): Promise<Map<string, number>> {
  const text = await (await fetch(`${h.apiMetricsUrl}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('saga_definition_') && !line.startsWith('saga_invariant_')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe("refund_and_reship's invariant, checked against the sandbox", () => {
  it('a completed run verifies: one live reship and one charge not refunded → COMPLETED', async () => {
    const run = await playForward('inv-complete', '7001');
    const done = await h.saga.complete(run.runId);
    expect(done.status).toBe('COMPLETED');
    const ledger = h.sandbox.admin.ledger();
    expect(ledger.shipping.shipments.filter((s) => s.orderId === '7001')).toHaveLength(1);
    expect((await h.saga.getRun(run.runId)).cases).toEqual([]);
  });

  it('a charge a person refunded elsewhere still verifies the unwound run → COMPENSATED', async () => {
    const run = await playForward('inv-person-refund', '7002');
    const pi = refOf(run, 'charge_card');
    await personRefunds(pi);
    await h.saga.unwind(run.runId, 'customer cancelled');
    const end = await h.terminal(run.runId);
    expect(end.status, end.statusReason ?? '').toBe('COMPENSATED');
    // One refund only, the person's: the compensator found the charge refunded and sent none.
    expect(h.sandbox.admin.ledger().stripe.refunds.filter((r) => r.payment_intent === pi)).toHaveLength(1);
    expect(end.cases).toEqual([]);
  });

  it('a shipment a person created breaks it → PARTIALLY_COMPENSATED with the clause and a case', async () => {
    const run = await playForward('inv-person-ship', '7003');
    const byHand = await personShips('7003');
    await h.saga.unwind(run.runId, 'customer cancelled');
    const end = await h.terminal(run.runId);
    expect(end.status).toBe('PARTIALLY_COMPENSATED');
    expect(end.statusReason).toContain(`invariant of ${DEFINITION}@1 failed`);
    expect(end.statusReason).toContain(`shipment ${byHand} of order 7003 is live`);
    // Every compensation did run: the run's own reship is cancelled, its charge refunded.
    const shipments = h.sandbox.admin.ledger().shipping.shipments.filter((s) => s.orderId === '7003');
    expect(shipments.map((s) => [s.id === byHand, s.status]).sort()).toEqual([
      [false, 'canceled'],
      [true, 'created'],
    ]);
    expect(end.cases).toEqual([
      expect.objectContaining({
        stepIdx: null,
        status: 'open',
        reason: expect.stringContaining(`shipment ${byHand} of order 7003 is live`) as unknown,
      }),
    ]);
  });

  it('a warehouse that cannot answer does not pass it: the unwound run waits, then ends when it answers', async () => {
    const run = await playForward('inv-vendor-down', '7004');
    // Only the invariant's read (every shipment of the order); the cancel reads one shipment by id.
    const fault = h.sandbox.admin.addFault({
      vendor: 'shipping',
      method: 'GET',
      path: '/v1/shipments',
      every: true,
      kind: 'status',
      status: 503,
    });
    await h.saga.unwind(run.runId, 'customer cancelled');
    const ledger = () => h.sandbox.admin.ledger();
    // Every compensation ran (the reship cancelled, the charge refunded), the check was asked and failed to
    // answer, and the run is still COMPENSATING.
    await waitUntil(() => {
      const shipped = ledger().shipping.shipments.find((s) => s.orderId === '7004');
      const firedAt = h.sandbox.admin.faults().find((f) => f.id === fault.id)?.fired ?? 0;
      return shipped?.status === 'canceled' && firedAt >= 2;
    });
    expect((await h.saga.getRun(run.runId)).status).toBe('COMPENSATING');
    h.sandbox.admin.removeFault(fault.id);
    const end = await h.terminal(run.runId);
    expect(end.status, end.statusReason ?? '').toBe('COMPENSATED');
    expect(end.cases).toEqual([]);
  });

  it('the gauges by definition count each end, the unwinds and the violation; unbound runs are "none"', async () => {
    const { runId } = await h.saga.createRun({ runId: 'inv-unbound' });
    await callUntilSettled(() =>
      h.saga.call(
        runId,
        'create_ticket',
        { summary: 'unbound', orderId: '1183' },
        { stepIdx: 0, waitMs: 5_000 },
      ),
    );
    expect((await h.saga.complete(runId)).status).toBe('COMPLETED');
    const m = await scrape();
    const d = `definition="${DEFINITION}"`;
    expect(m.get(`saga_definition_runs{${d},status="COMPLETED"}`)).toBe(1);
    expect(m.get(`saga_definition_runs{${d},status="COMPENSATED"}`)).toBe(2);
    expect(m.get(`saga_definition_runs{${d},status="PARTIALLY_COMPENSATED"}`)).toBe(1);
    expect(m.get(`saga_definition_runs{${d},status="RUNNING"}`)).toBe(0);
    expect(m.get(`saga_definition_unwinds{${d}}`)).toBe(3);
    expect(m.get(`saga_definition_manual_interventions{${d}}`)).toBe(0);
    expect(m.get(`saga_definition_unknown_steps{${d}}`)).toBe(0);
    expect(m.get(`saga_invariant_violations{${d}}`)).toBe(1);
    expect(m.get(`saga_invariant_open_violations{${d}}`)).toBe(1);
    expect(m.get(`saga_invariant_restored{${d}}`)).toBe(0);
    // The unbound run, apart from the bound ones; the pivot definition is listed with nothing.
    expect(m.get('saga_definition_runs{definition="none",status="COMPLETED"}')).toBe(1);
    expect(m.get('saga_definition_runs{definition="none",status="PARTIALLY_COMPENSATED"}')).toBe(0);
    expect(m.get('saga_definition_runs{definition="refund_and_reship_pivot",status="COMPLETED"}')).toBe(0);
    // Only registered names, `none` and `other` label a series.
    const labels = new Set([...m.keys()].map((k) => /definition="([^"]*)"/.exec(k)?.[1]).filter(Boolean));
    expect([...labels].sort()).toEqual(['none', DEFINITION, 'refund_and_reship_pivot'].sort());
  });
});
