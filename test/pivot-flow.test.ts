/**
 * The refund-and-reship run reordered around a pivot, with every service as its own process against the
 * vendor sandbox: before the pivot only drafts and a hold (search, draft the email, draft the ticket,
 * authorise the payment); one person approves the complete proposal; after it the commit steps run
 * (capture, open the ticket, send the email). Approved: every effect exactly once and the run COMPLETED by
 * itself. Rejected: the hold is released, the drafts are deleted, nothing reaches the customer, COMPENSATED.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSagaClient, RunNotRunningError } from '@agent-saga/client';
import { withEmailDrafts } from '@agent-saga/connectors';
import { createApiToken } from '@agent-saga/core';
import { callUntilSettled } from './fixtures/support-flow.js';
import { startSupportHarness, type SupportHarness } from './fixtures/support-harness.js';
import { waitFor } from './fixtures/dispatcher-processes.js';

let h: SupportHarness;
let operator: string;
beforeAll(async () => {
  h = await startSupportHarness('pivot_flow', ['relay', 'executor', 'reconciler', 'compensator']);
  operator = await createApiToken(h.env.db, { tenantId: 'acme', role: 'operator', label: 'olga' });
}, 90_000);
afterAll(async () => h?.close());

const CUSTOMER = 'cus_sandbox_ada';
const EMAIL = { to: 'ada@example.com', template: 'refund_confirmation' };

async function api(method: string, path: string, body: unknown, token: string) {
  const res = await fetch(`${h.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Plays the agent up to the pivot; returns what the pivot answered. */
async function stageRun(runId: string, orderId: string) {
  const vars = { orderId, amount: 4900, currency: 'eur' };
  const created = await api('POST', '/v1/runs', { runId, policy: { requirePivot: true } }, h.token);
  expect(created.status).toBe(201);
  const run = h.saga.run(runId);
  const order = await run.call('get_order', { orderId });
  expect(order.status).toBe('PURE');
  const draft = await callUntilSettled(() => run.call('create_email_draft', { ...EMAIL, vars }));
  const ticket = await callUntilSettled(() =>
    run.call('create_ticket_draft', { summary: `Refund for order #${orderId}`, orderId }),
  );
  const hold = await callUntilSettled(() =>
    run.call('authorize_payment', {
      customerId: CUSTOMER,
      amount: 4900,
      currency: 'eur',
      reason: `Refund ${orderId}`,
    }),
  );
  for (const o of [draft, ticket, hold]) expect(o.status).toBe('CONFIRMED');
  const ticketKey = (ticket as { externalRef: string }).externalRef;
  const paymentIntent = (hold as { externalRef: string }).externalRef;

  // Without a pivot, the irreversible send is refused outright (policy requirePivot).
  const early = await api(
    'POST',
    `/v1/runs/${runId}/calls`,
    { tool: 'send_email', args: { ...EMAIL, vars } },
    h.token,
  );
  expect(early.status).toBe(409);
  expect(early.body.error).toMatchObject({ code: 'PIVOT_REQUIRED' });

  const pivot = await api(
    'POST',
    `/v1/runs/${runId}/pivot`,
    {
      summary: `Refund order ${orderId}: capture the hold, open the ticket, email the customer`,
      commit: [
        { tool: 'capture_payment', args: { paymentIntent } },
        { tool: 'open_ticket', args: { ticket: ticketKey } },
        { tool: 'send_email', args: { ...EMAIL, vars } },
      ],
    },
    h.token,
  );
  expect(pivot.status).toBe(202);
  return { ...(pivot.body as { approvalId: string; hash: string }), ticketKey, paymentIntent };
}

function ledgerOf(paymentIntent: string, ticketKey: string) {
  const ledger = h.sandbox.admin.ledger();
  return {
    intent: ledger.stripe.paymentIntents.find((p) => p.id === paymentIntent),
    refunds: ledger.stripe.refunds.filter((r) => r.payment_intent === paymentIntent).length,
    ticket: ledger.jira.issues.find((i) => i.key === ticketKey),
    emailsTo: ledger.email.emails.filter((e) => JSON.stringify(e).includes(EMAIL.to)),
  };
}

describe('the pivot, end to end', () => {
  it('approved once: capture, open and send each happen once, and the run completes by itself', async () => {
    const staged = await stageRun('pivot-yes', '1183');
    const before = ledgerOf(staged.paymentIntent, staged.ticketKey);
    expect(before.intent?.status).toBe('requires_capture');
    expect(before.ticket?.status).not.toBe('Open');
    const sentBefore = before.emailsTo.length;

    const decided = await api(
      'POST',
      `/v1/approvals/${staged.approvalId}/decision`,
      { decision: 'approve', hash: staged.hash, comment: 'amount and customer checked' },
      operator,
    );
    expect(decided.status).toBe(200);
    const run = await h.terminal('pivot-yes', 45_000);
    expect(run.status).toBe('COMPLETED');
    expect(run.steps.map((s) => [s.tool, s.status])).toEqual([
      ['create_email_draft', 'CONFIRMED'],
      ['create_ticket_draft', 'CONFIRMED'],
      ['authorize_payment', 'CONFIRMED'],
      ['capture_payment', 'CONFIRMED'],
      ['open_ticket', 'CONFIRMED'],
      ['send_email', 'CONFIRMED'],
    ]);
    const after = ledgerOf(staged.paymentIntent, staged.ticketKey);
    expect(after.intent).toMatchObject({ status: 'succeeded', amount: 4900 });
    expect(after.refunds).toBe(0);
    expect(after.ticket?.statusCategory).not.toBe('done');
    expect(after.emailsTo.length - sentBefore).toBe(1);

    // A replayed approval changes nothing.
    const replay = await api(
      'POST',
      `/v1/approvals/${staged.approvalId}/decision`,
      { decision: 'approve', hash: staged.hash },
      operator,
    );
    expect(replay.status).toBe(409);
    expect(ledgerOf(staged.paymentIntent, staged.ticketKey).emailsTo.length - sentBefore).toBe(1);
  });

  it('rejected: the hold is released, the drafts are deleted, nothing reaches the customer', async () => {
    const staged = await stageRun('pivot-no', '1182');
    const sentBefore = ledgerOf(staged.paymentIntent, staged.ticketKey).emailsTo.length;
    const decided = await api(
      'POST',
      `/v1/approvals/${staged.approvalId}/decision`,
      { decision: 'reject', hash: staged.hash, comment: 'order not eligible' },
      operator,
    );
    expect(decided.status).toBe(200);
    const run = await h.terminal('pivot-no', 45_000);
    expect(run.status).toBe('COMPENSATED');
    expect(run.statusReason).toContain('rejected by olga');
    const after = ledgerOf(staged.paymentIntent, staged.ticketKey);
    expect(after.intent?.status).toBe('canceled');
    expect(after.refunds).toBe(0);
    expect(after.ticket).toBeUndefined();
    expect(after.emailsTo.length).toBe(sentBefore);
    const drafts = await withEmailDrafts(h.env.db)
      .selectFrom('email_drafts')
      .select('status')
      .where('idempotency_key', '=', run.steps[0]!.idempotencyKey)
      .execute();
    expect(drafts.map((d) => d.status)).toEqual(['deleted']);
    expect(run.steps.filter((s) => s.status === 'REJECTED').map((s) => s.tool)).toEqual([
      'capture_payment',
      'open_ticket',
      'send_email',
    ]);
    expect(run.corrections).toEqual([]);
  });

  it('expired: a pivot nobody decides in time is unwound by the reconciler, releasing its hold', async () => {
    const staged = await stageRun('pivot-late', '1183');
    await h.env.db
      .updateTable('approvals')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', staged.approvalId)
      .execute();
    const run = await waitFor(
      'pivot-late unwound',
      async () => {
        const r = await h.saga.getRun('pivot-late');
        return r.status === 'COMPENSATED' ? r : undefined;
      },
      45_000,
      200,
    );
    expect(run.statusReason).toContain('expired');
    expect(ledgerOf(staged.paymentIntent, staged.ticketKey).intent?.status).toBe('canceled');
  });

  it('a held irreversible send unwound before anyone decided: withdrawn, a late approval refused, never sent', async () => {
    const created = await api('POST', '/v1/runs', { runId: 'held-unwound' }, h.token);
    expect(created.status).toBe(201);
    const vars = { orderId: '1184', amount: 4900, currency: 'eur' };
    const held = await api(
      'POST',
      '/v1/runs/held-unwound/calls',
      { tool: 'send_email', args: { ...EMAIL, vars } },
      h.token,
    );
    expect(held.status).toBe(202);
    expect(held.body.status).toBe('AWAITING_APPROVAL');
    // Pending and decidable before the unwind: in the inbox with its hash; a decision reaches the hash check.
    const inbox = await api('GET', '/v1/approvals?status=pending&runId=held-unwound', undefined, operator);
    const [approval] = inbox.body.approvals as { id: string; hash: string }[];
    expect(approval).toMatchObject({
      kind: 'step',
      status: 'pending',
      steps: [{ stepIdx: 0, tool: 'send_email', status: 'AWAITING_APPROVAL' }],
    });
    const stale = await api(
      'POST',
      `/v1/approvals/${approval!.id}/decision`,
      { decision: 'approve', hash: '0'.repeat(64) },
      operator,
    );
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'APPROVAL_HASH_MISMATCH' });
    const emailsToCustomer = () =>
      h.sandbox.admin.ledger().email.emails.filter((e) => JSON.stringify(e).includes(EMAIL.to)).length;
    const emailsBefore = emailsToCustomer();

    const unwound = await api('POST', '/v1/runs/held-unwound/unwind', { reason: 'wrong customer' }, h.token);
    expect(unwound.status).toBe(202);
    const run = await h.terminal('held-unwound', 45_000);
    expect(run.status).toBe('COMPENSATED');
    expect(run.steps.map((s) => [s.tool, s.status])).toEqual([['send_email', 'REJECTED']]);
    const closed = await api('GET', `/v1/approvals/${approval!.id}`, undefined, operator);
    expect(closed.body).toMatchObject({ status: 'superseded' });
    expect(closed.body.comment).toContain('wrong customer');
    expect(
      (await api('GET', '/v1/approvals?status=pending&runId=held-unwound', undefined, operator)).body,
    ).toEqual({
      approvals: [],
    });

    // The operator approves late, with the right hash, through the typed client: refused, nothing sent.
    const late = await createSagaClient({ baseUrl: h.baseUrl, token: operator })
      .decideApproval(approval!.id, { decision: 'approve', hash: approval!.hash })
      .catch((err: unknown) => err);
    expect(late).toBeInstanceOf(RunNotRunningError);
    expect(late).toMatchObject({ status: 409, code: 'RUN_NOT_RUNNING', runStatus: 'COMPENSATED' });
    const after = await h.saga.getRun('held-unwound');
    expect(after.status).toBe('COMPENSATED');
    expect(after.steps.map((s) => s.status)).toEqual(['REJECTED']);
    const outbox = await h.env.db
      .selectFrom('outbox')
      .select('id')
      .where('run_id', '=', 'held-unwound')
      .execute();
    expect(outbox).toEqual([]);
    const emails = h.sandbox.admin.ledger().email.emails;
    expect(emails.filter((e) => e.idempotencyKey === run.steps[0]!.idempotencyKey)).toEqual([]);
    expect(emailsToCustomer()).toBe(emailsBefore);
  });

  it('a held irreversible step, approved on its own; its correction is sent by a person, once', async () => {
    const created = await api('POST', '/v1/runs', { runId: 'held-send' }, h.token);
    expect(created.status).toBe(201);
    const vars = { orderId: '1183', amount: 4900, currency: 'eur' };
    const held = await api(
      'POST',
      '/v1/runs/held-send/calls',
      { tool: 'send_email', args: { ...EMAIL, vars } },
      h.token,
    );
    expect(held.status).toBe(202);
    expect(held.body.status).toBe('AWAITING_APPROVAL');
    const inbox = await api('GET', '/v1/approvals?runId=held-send', undefined, operator);
    const [approval] = inbox.body.approvals as { id: string; hash: string; kind: string }[];
    expect(approval!.kind).toBe('step');
    const ok = await api(
      'POST',
      `/v1/approvals/${approval!.id}/decision`,
      { decision: 'approve', hash: approval!.hash },
      operator,
    );
    expect(ok.status).toBe(200);
    // A retry of the held step at its index (0): a fresh run handle reads the log, and once the approved
    // send is CONFIRMED it is no longer open there, so the handle would take the call for a new step.
    const sent = await callUntilSettled(() =>
      h.saga.call('held-send', 'send_email', { ...EMAIL, vars }, { stepIdx: held.body.stepIdx as number }),
    );
    expect(sent.status).toBe('CONFIRMED');
    const emailsBefore = h.sandbox.admin.ledger().email.emails.length;

    expect((await api('POST', '/v1/runs/held-send/unwind', { reason: 'wrong order' }, h.token)).status).toBe(
      202,
    );
    const run = await h.terminal('held-send', 45_000);
    expect(run.irreversibleBeforePivot).toBe(1);
    const list = await api('GET', '/v1/corrections?runId=held-send', undefined, operator);
    const [correction] = list.body.corrections as {
      id: string;
      hash: string;
      command: { template: string };
    }[];
    expect(correction).toMatchObject({
      status: 'open',
      audience: ['customer'],
      command: { template: 'email_sent_in_error' },
    });
    expect(h.sandbox.admin.ledger().email.emails.length).toBe(emailsBefore);

    const byAgent = await api(
      'POST',
      `/v1/corrections/${correction!.id}/send`,
      { hash: correction!.hash },
      h.token,
    );
    expect(byAgent.status).toBe(403);
    const send = await api(
      'POST',
      `/v1/corrections/${correction!.id}/send`,
      { hash: correction!.hash },
      operator,
    );
    expect(send.status).toBe(200);
    expect(send.body).toMatchObject({ status: 'sent', decidedBy: 'olga' });
    expect(send.body.externalRef).toEqual(expect.any(String));
    const again = await api(
      'POST',
      `/v1/corrections/${correction!.id}/send`,
      { hash: correction!.hash },
      operator,
    );
    expect(again.status).toBe(409);
    const emails = h.sandbox.admin.ledger().email.emails;
    expect(emails.length).toBe(emailsBefore + 1);
    expect(emails.filter((e) => e.idempotencyKey === send.body.idempotencyKey)).toHaveLength(1);
  });
});
