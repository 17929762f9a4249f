/**
 * No replanned duplicates, with the real connectors against the vendor sandbox and every role its own
 * process: a model that replans `create_ticket` for the same order as a new step (the client's run handle
 * gives it the next index) is refused with the earlier ticket, and Jira holds one ticket; a second charge of
 * the same amount is refused too; another order goes through; a second email to the same customer is not a
 * duplicate (`send_email` is `repeatable`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuplicateOperationError } from '@agent-saga/client';
import { callUntilSettled, CHARGE_AMOUNT, runLedger } from './fixtures/support-flow.js';
import { startSupportHarness, type SupportHarness } from './fixtures/support-harness.js';

let h: SupportHarness;
beforeAll(async () => {
  h = await startSupportHarness('replanned_dup', ['relay', 'executor']);
}, 90_000);
afterAll(async () => h?.close());

const CHARGE = { customerId: 'cus_sandbox_ada', amount: CHARGE_AMOUNT, currency: 'eur' };

describe('a replanned duplicate against the sandbox', () => {
  it('refuses a second ticket and a second charge for the same thing, one of each in the ledger', async () => {
    await h.saga.createRun({ runId: 'replan-1182' });
    const run = h.saga.run('replan-1182');
    const ticket = await callUntilSettled(() =>
      run.call('create_ticket', { summary: 'Refund for order #1182', orderId: '1182' }),
    );
    expect(ticket).toMatchObject({ status: 'CONFIRMED', stepIdx: 0 });
    const ticketKey = (ticket as { externalRef: string }).externalRef;

    // The model forgot it opened one, and replans it in other words: a new step, refused.
    const again = await run
      .call('create_ticket', { summary: 'Order 1182: customer wants a refund', orderId: '1182' })
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(DuplicateOperationError);
    const dup = again as DuplicateOperationError;
    expect(dup).toMatchObject({ code: 'DUPLICATE_OPERATION', status: 409 });
    expect([dup.earlierStepIdx, dup.earlierStatus, dup.externalRef]).toEqual([0, 'CONFIRMED', ticketKey]);
    expect(run.nextStepIdx).toBe(1); // nothing was written at 1: the handle gave the index back

    const charge = await callUntilSettled(() =>
      run.call('charge_card', { ...CHARGE, reason: 'Refund 1182' }),
    );
    expect(charge).toMatchObject({ status: 'CONFIRMED', stepIdx: 1 });
    const twice = await run
      .call('charge_card', { ...CHARGE, reason: 'Refund for order 1182, again' })
      .catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(DuplicateOperationError);
    expect((twice as DuplicateOperationError).earlierStepIdx).toBe(1);

    // Another order is another operation.
    const other = await callUntilSettled(() =>
      run.call('create_ticket', { summary: 'Refund for order #1183', orderId: '1183' }),
    );
    expect(other).toMatchObject({ status: 'CONFIRMED', stepIdx: 2 });

    // Two emails of one template to one customer: repeatable, each held for a person (irreversible). The
    // second names its index: the handle would call it a retry of the first, still open (held).
    const email = {
      to: 'ada@example.com',
      template: 'refund_confirmation',
      vars: { amount: 4900, currency: 'eur' },
    };
    const first = await run.call('send_email', { ...email, vars: { ...email.vars, orderId: '1182' } });
    const second = await h.saga.call(
      'replan-1182',
      'send_email',
      { ...email, vars: { ...email.vars, orderId: '1183' } },
      { stepIdx: 4 },
    );
    expect([first.status, second.status]).toEqual(['AWAITING_APPROVAL', 'AWAITING_APPROVAL']);
    expect([first, second].map((o) => ('stepIdx' in o ? o.stepIdx : null))).toEqual([3, 4]);

    const view = await h.saga.getRun('replan-1182');
    expect(view.steps.map((s) => s.tool)).toEqual([
      'create_ticket',
      'charge_card',
      'create_ticket',
      'send_email',
      'send_email',
    ]);
    const ledger = runLedger(h.sandbox.admin.ledger(), view);
    const orders = ledger.tickets.map((t) => t.key);
    expect(orders).toHaveLength(2); // 1182 once, 1183 once
    expect(orders).toContain(ticketKey);
    expect(ledger.charges).toHaveLength(1);
    expect(ledger.emails).toBe(0);
  }, 60_000);
});
