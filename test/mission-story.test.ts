/**
 * The mission's opening incident, up to the warehouse rejection, through the real product: the sandbox's
 * Stripe, Jira and shipping APIs over HTTP, the connectors, and the dispatcher's api, relay and executor as
 * real processes. The story:
 *
 *  1. create_ticket: Jira creates the ticket, then the gateway answers 504 → the agent is told UNKNOWN;
 *  2. the model retries with reworded arguments ('Order #1182 refund') → the ticket is found by its label,
 *     not created twice (Jira has no idempotency: a naive retry would make a second ticket);
 *  3. charge_card: Stripe charges the card and the executor process is SIGKILLed before it records;
 *  4. a fresh agent resumes from GET /v1/runs/{id}, not from a transcript, and retries the open step → the
 *     charge is found by its key, not made again;
 *  5. reship: the warehouse says the order is not eligible → FAILED.
 *
 * The ledger at the end: one ticket, one charge, no refund, no shipment, no email.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSagaClient, ToolOutcomeUnknown, type SagaClient } from '@agent-saga/client';
import { createApiToken, CrashPoint, stepKey } from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { startSandbox, type RunningSandbox } from '@agent-saga/sandbox';
import { killAll, readStep, startRole, waitFor, type RoleProcess } from './fixtures/dispatcher-processes.js';
import { freePort } from '@agent-saga/core';
import { sandboxConnectorEnv } from './fixtures/sandbox-env.js';

/** The vendors' search lag, kept short so the story runs in seconds; the connectors are told the same. */
const LAG_MS = 400;

let env: TestEnv;
let sandbox: RunningSandbox;
let saga: SagaClient;
let roleEnv: Record<string, string>;
const procs: RoleProcess[] = [];

beforeAll(async () => {
  env = await createTestEnv('mission');
  sandbox = await startSandbox({ settings: { stripeSearchLagMs: LAG_MS, jiraSearchLagMs: LAG_MS } });
  const port = await freePort();
  roleEnv = {
    ...sandboxConnectorEnv(sandbox, LAG_MS),
    SAGA_FAST_PATH: 'true',
    LOOKUP_RECHECK_MS: '200',
    LEASE_MARGIN_MS: '500',
    // A short Stripe timeout keeps the killed executor's lease short (timeout × requests + margin).
    STRIPE_TIMEOUT_MS: '1000',
    PORT: String(port),
  };
  procs.push(
    startRole(env, 'api', roleEnv),
    startRole(env, 'relay', roleEnv),
    startRole(env, 'executor', roleEnv),
  );
  saga = createSagaClient({
    baseUrl: `http://127.0.0.1:${port}`,
    token: await createApiToken(env.db, { tenantId: 'acme', role: 'agent' }),
  });
  await waitFor(
    'api ready',
    () =>
      fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => (r.ok ? true : undefined),
        () => undefined,
      ),
    55_000,
    200,
  );
});
afterAll(async () => {
  await killAll(procs);
  await sandbox?.close();
  await env?.close();
});

/** What a patient model does with "unknown" or "still running": the same call again, a little later. */
async function retryUntilKnown<T extends { status: string }>(
  call: () => Promise<T>,
  attempts = 40,
): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      const outcome = await call();
      if (outcome.status !== 'INTENDED' || i >= attempts) return outcome;
    } catch (e) {
      if (!(e instanceof ToolOutcomeUnknown) || i >= attempts) throw e;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("the mission's opening incident", () => {
  it('ends with one ticket and one charge, the warehouse rejection recorded, nothing sent twice', async () => {
    const { runId } = await saga.createRun({ runId: 'order-1182' });
    const order = await saga.call(runId, 'get_order', { orderId: '1182' }, { stepIdx: 0 });
    expect(order.status).toBe('PURE');

    // 1. Jira creates the ticket, then the gateway answers 504.
    sandbox.admin.addFault({
      vendor: 'jira',
      method: 'POST',
      path: '/rest/api/3/issue',
      nth: 1,
      kind: 'error_after',
    });
    const first = await saga
      .call(runId, 'create_ticket', { summary: 'Refund for order #1182', orderId: '1182' }, { stepIdx: 0 })
      .catch((e: unknown) => e);
    expect(first).toBeInstanceOf(ToolOutcomeUnknown);
    expect(sandbox.admin.ledger().jira.issues).toHaveLength(1);

    // 2. The model rewords and retries the same step: the ticket is found by its label once the index shows it.
    const ticket = await retryUntilKnown(() =>
      saga.call(runId, 'create_ticket', { summary: 'Order #1182 refund', orderId: '1182' }, { stepIdx: 0 }),
    );
    expect(ticket).toMatchObject({ status: 'CONFIRMED', replayed: true, externalRef: 'SUP-1' });
    expect(sandbox.admin.ledger().jira.issues).toHaveLength(1);
    expect(sandbox.admin.ledger().jira.issues[0]!.labels).toContain(
      `saga-${stepKey(runId, 0, 'create_ticket')}`,
    );

    // 3. The charge succeeds at Stripe; the executor is killed before it records the outcome.
    const healthy = procs.find((p) => p.role === 'executor')!;
    await healthy.stop('SIGTERM');
    const crashing = startRole(env, 'executor', {
      ...roleEnv,
      SAGA_CRASH_POINTS: CrashPoint.AFTER_TOOL_BEFORE_RECORD,
    });
    procs.push(crashing);
    const chargeArgs = {
      customerId: 'cus_sandbox_ada',
      amount: 4900,
      currency: 'eur',
      reason: 'Refund order 1182',
    };
    const charge = await saga
      .call(runId, 'charge_card', chargeArgs, { stepIdx: 1, waitMs: 3_000 })
      .catch((e: unknown) => e);
    expect((await crashing.exited).signal).toBe('SIGKILL');
    expect(charge).not.toMatchObject({ status: 'CONFIRMED' });
    const chargeKey = stepKey(runId, 1, 'charge_card');
    expect((await readStep(env.db, chargeKey))?.status).toBe('INTENDED');
    expect(sandbox.admin.ledger().stripe.paymentIntents).toHaveLength(1);
    procs.push(startRole(env, 'executor', roleEnv));

    // 4. A fresh agent, with nothing but the run id, resumes from the log and retries the open step.
    const resumed = saga.run(runId);
    await resumed.sync();
    expect(resumed.openSteps).toEqual([{ stepIdx: 1, tool: 'charge_card' }]);
    const charged = await retryUntilKnown(() => resumed.call('charge_card', chargeArgs, { waitMs: 2_000 }));
    expect(charged).toMatchObject({ status: 'CONFIRMED', stepIdx: 1, idempotencyKey: chargeKey });
    const intents = sandbox.admin.ledger().stripe.paymentIntents;
    expect(intents).toHaveLength(1);
    expect(intents[0]).toMatchObject({
      status: 'succeeded',
      amount_received: 4900,
      idempotencyKey: chargeKey,
    });
    expect(intents[0]!.metadata).toMatchObject({ saga_key: chargeKey });

    // 5. The warehouse refuses the reship: a definitive no, FAILED, nothing shipped.
    const reship = await resumed.call('reship', {
      orderId: '1182',
      items: [{ sku: 'MUG-BLUE', quantity: 1 }],
      reason: 'Replacement for a damaged mug',
    });
    expect(reship).toMatchObject({ status: 'FAILED', stepIdx: 2 });

    const ledger = sandbox.admin.ledger();
    expect(ledger.jira.issues).toHaveLength(1);
    expect(ledger.stripe.paymentIntents).toHaveLength(1);
    expect(ledger.stripe.refunds).toHaveLength(0);
    expect(ledger.shipping.shipments).toHaveLength(0);
    expect(ledger.email.emails).toHaveLength(0);
    const run = await saga.getRun(runId);
    expect(run.steps.map((s) => [s.tool, s.status])).toEqual([
      ['create_ticket', 'CONFIRMED'],
      ['charge_card', 'CONFIRMED'],
      ['reship', 'FAILED'],
    ]);
  });
});
