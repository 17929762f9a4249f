/**
 * Issue 14: a customer's personal data never reaches a log line. A full incident through the real product
 * (the vendor sandbox, the real connectors, and the api, relay, executor, reconciler and compensator as
 * real processes, every one logging at `debug`): a ticket about the customer, a charge with a receipt
 * email, a reship the warehouse refuses (a failure), the unwind (a refund and a closed ticket: the
 * compensations), and the correction to the customer that the unwind queues, sent by an operator.
 *
 * What a person checks: every role's whole output. The customer's email address and the shipping address
 * line appear in no line of any role, while the argument names (`receiptEmail`, `reason`) and the hashes
 * do. Meanwhile the sandbox did receive them: the values went where they had to, and only there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '@agent-saga/core';
import { callUntilSettled, CHARGE_AMOUNT } from './fixtures/support-flow.js';
import { startSupportHarness, type SupportHarness } from './fixtures/support-harness.js';
import { waitFor } from './fixtures/dispatcher-processes.js';

const EMAIL = 'ada.byron.lovelace@example.com';
const ADDRESS_LINE = '12 St James Square, London SW1Y 4JH';
const runId = 'pii-incident';

let h: SupportHarness;
let operator: string;

beforeAll(async () => {
  h = await startSupportHarness('pii_logs', ['relay', 'executor', 'reconciler', 'compensator'], {
    env: { LOG_LEVEL: 'debug' },
  });
  operator = await createApiToken(h.env.db, { tenantId: 'acme', role: 'operator', label: 'olga' });
}, 90_000);
afterAll(async () => h?.close());

async function asOperator(method: string, path: string, body?: unknown) {
  const res = await fetch(`${h.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('logs of a full incident', () => {
  it("carry argument names and hashes, never the customer's email or address", async () => {
    await h.saga.createRun({ runId });
    const run = h.saga.run(runId);
    const ticket = await callUntilSettled(() =>
      run.call('create_ticket', {
        summary: `Refund for ${EMAIL}`,
        orderId: '1182',
        description: `Customer lives at ${ADDRESS_LINE}`,
      }),
    );
    expect(ticket.status).toBe('CONFIRMED');
    const charge = await callUntilSettled(() =>
      run.call('charge_card', {
        customerId: 'cus_sandbox_ada',
        amount: CHARGE_AMOUNT,
        currency: 'eur',
        reason: 'Refund order 1182',
        receiptEmail: EMAIL,
      }),
    );
    expect(charge.status).toBe('CONFIRMED');
    // The failure: the warehouse refuses to reship order 1182.
    const reship = await callUntilSettled(() =>
      run.call('reship', {
        orderId: '1182',
        items: [{ sku: 'MUG-BLUE', quantity: 1 }],
        reason: `Replacement to ${ADDRESS_LINE}`,
      }),
    );
    expect(reship.status).toBe('FAILED');

    // The compensations: the charge refunded, the ticket closed.
    expect(await h.saga.unwind(runId, 'the customer withdrew the request')).toMatchObject({
      status: 'COMPENSATING',
    });
    const ended = await h.terminal(runId, 60_000);
    expect(ended.status).toBe('COMPENSATED');
    const ledger = h.sandbox.admin.ledger();
    expect(ledger.stripe.refunds.length).toBeGreaterThan(0);
    expect(ledger.stripe.paymentIntents.some((pi) => pi.receipt_email === EMAIL)).toBe(true);

    // The correction to the customer, queued by the unwind and sent by an operator (the api's email tool).
    const correction = await waitFor(
      'the receipt correction',
      async () => {
        const r = await asOperator('GET', `/v1/corrections?runId=${runId}&status=open`);
        return (r.body.corrections as { id: string; hash: string; command: { to: string } }[])[0];
      },
      20_000,
      200,
    );
    expect(correction.command.to).toBe(EMAIL);
    const sent = await asOperator('POST', `/v1/corrections/${correction.id}/send`, { hash: correction.hash });
    expect(sent.status).toBe(200);
    expect(h.sandbox.admin.ledger().email.emails.some((e) => JSON.stringify(e).includes(EMAIL))).toBe(true);

    // Every role's whole output, line by line.
    const lines = h.procs.flatMap((p) =>
      p
        .output()
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((line) => ({ role: p.role, line })),
    );
    const roles = new Set(lines.map((l) => l.role));
    for (const role of ['api', 'relay', 'executor', 'reconciler', 'compensator'])
      expect(roles).toContain(role);
    expect(lines.length).toBeGreaterThan(20);

    const leaks = lines.filter(({ line }) => line.includes(EMAIL) || line.includes(ADDRESS_LINE));
    expect(leaks).toEqual([]);
    // Nor a part of them a line might quote (the local part, the street).
    expect(lines.filter(({ line }) => line.includes('ada.byron') || line.includes('St James'))).toEqual([]);

    // The lines are there, with the names and a hash: "step intended" for each side-effecting step.
    const intended = lines
      .filter(({ line }) => line.includes('"step intended"'))
      .map(({ line }) => JSON.parse(line) as { tool: string; argNames: string[]; argsHash: string });
    expect(intended.map((l) => l.tool).sort()).toEqual(
      expect.arrayContaining(['charge_card', 'create_ticket', 'reship']),
    );
    const chargeLine = intended.find((l) => l.tool === 'charge_card')!;
    expect(chargeLine.argNames).toEqual(['amount', 'currency', 'customerId', 'reason', 'receiptEmail']);
    expect(chargeLine.argsHash).toMatch(/^[0-9a-f]{16}$/);
    const row = await h.env.db
      .selectFrom('saga_log')
      .select('payload_hash')
      .where('run_id', '=', runId)
      .where('tool', '=', 'charge_card')
      .executeTakeFirstOrThrow();
    expect(row.payload_hash.toString('hex').startsWith(chargeLine.argsHash)).toBe(true);
    expect(intended.find((l) => l.tool === 'reship')!.argNames).toContain('reason');
  }, 150_000);
});
