/**
 * The forward money approval against the vendor sandbox, every role its own process with the real
 * connectors: on a run bound to `refund_and_reship` with `policy.approveMoneyAbove`, a charge above the
 * limit waits (AWAITING_APPROVAL, nothing reaches Stripe) until an operator approves it with the hash they
 * read; it is then sent once, and the sandbox's Stripe ledger holds exactly one charge for the run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSagaClient } from '@agent-saga/client';
import { createApiToken } from '@agent-saga/core';
import { callUntilSettled, CHARGE_AMOUNT, runLedger } from '../../../test/fixtures/support-flow.js';
import { startSupportHarness, type SupportHarness } from '../../../test/fixtures/support-harness.js';
import { waitFor } from '../../../test/fixtures/dispatcher-processes.js';

let h: SupportHarness;
beforeAll(async () => {
  h = await startSupportHarness('money_approval', ['relay', 'executor']);
}, 90_000);
afterAll(async () => h?.close());

const CHARGE = {
  customerId: 'cus_sandbox_ada',
  amount: CHARGE_AMOUNT,
  currency: 'eur',
  reason: 'Refund 1182',
};

describe('a charge above approveMoneyAbove', () => {
  it('is held until an operator approves it, then sent once: one charge in the ledger', async () => {
    const runId = 'money-approval-1182';
    await h.saga.createRun({
      runId,
      definition: { name: 'refund_and_reship' },
      policy: { approveMoneyAbove: { EUR: CHARGE_AMOUNT - 1 } },
    });
    const run = h.saga.run(runId);
    const ticket = await callUntilSettled(() =>
      run.call('create_ticket', { summary: 'Refund for order #1182', orderId: '1182' }),
    );
    expect(ticket).toMatchObject({ status: 'CONFIRMED', stepIdx: 0 });

    const held = await run.call('charge_card', CHARGE, { waitMs: 500 });
    expect(held).toMatchObject({ status: 'AWAITING_APPROVAL', stepIdx: 1 });
    const before = await h.saga.getRun(runId);
    expect(runLedger(h.sandbox.admin.ledger(), before).charges).toEqual([]);
    const approval = before.approvals.find((a) => a.status === 'pending');
    expect(approval).toMatchObject({
      kind: 'step',
      evidence: { money: { currency: 'eur', amount: CHARGE_AMOUNT, limit: CHARGE_AMOUNT - 1 } },
    });

    const operator = createSagaClient({
      baseUrl: h.baseUrl,
      token: await createApiToken(h.env.db, { tenantId: 'acme', role: 'operator', label: 'alice' }),
    });
    await operator.decideApproval(approval!.id, { decision: 'approve', hash: approval!.hash });
    const charged = await waitFor(
      'the charge confirmed',
      async () => {
        const v = await h.saga.getRun(runId);
        return v.steps[1]?.status === 'CONFIRMED' ? v : undefined;
      },
      20_000,
      100,
    );
    // The agent's retry of the step reads the outcome; it sends nothing again.
    const retried = await run.call('charge_card', CHARGE);
    expect(retried).toMatchObject({ status: 'CONFIRMED', stepIdx: 1 });
    const after = await h.saga.getRun(runId);
    const charges = runLedger(h.sandbox.admin.ledger(), after).charges;
    expect(charges).toHaveLength(1);
    expect(charges[0]).toMatchObject({ amount: CHARGE_AMOUNT, status: 'succeeded' });
    expect(charged.steps[1]?.attempts).toBe(1);
  }, 60_000);
});
