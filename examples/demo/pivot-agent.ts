/**
 * The scripted agent of the pivot story: the refund-and-reship run reordered around a pivot, so that
 * before it nothing the agent does reaches the customer or cannot be undone (no model needed).
 *
 *  1. the run is created bound to the built-in definition `refund_and_reship_pivot`, whose policy is
 *     `{ requirePivot: true }`; get_order (pure);
 *  2. only drafts and a hold: create_email_draft, create_ticket_draft, authorize_payment;
 *  3. send_email before the pivot: refused (409 PIVOT_REQUIRED), nothing written, nothing sent;
 *  4. the pivot: capture the hold, open the ticket, send the email, as one proposal for one person
 *     (202 with the approval's id, hash and deadline). The run waits in AWAITING_APPROVAL.
 */
import {
  ApiErrorCode,
  SagaApiError,
  type CallOutcome,
  type PivotProposal,
  type SagaClient,
} from '@agent-saga/client';
import { act, answer, aside } from './narration.js';
import { describeOutcome, retryUntilSettled } from './scripted-agent.js';

export const ORDER_ID = '1182';
export const CUSTOMER = Object.freeze({ id: 'cus_sandbox_ada', email: 'ada@example.com' });
const AMOUNT = Object.freeze({ amount: 4900, currency: 'eur' });
/** The refund confirmation, drafted before the pivot and sent, with exactly these arguments, after it. */
const EMAIL = Object.freeze({
  to: CUSTOMER.email,
  template: 'refund_confirmation',
  vars: { orderId: ORDER_ID, ...AMOUNT },
});

/** What the agent staged, as the log answered it. */
export interface StagedPivot {
  readonly runId: string;
  readonly proposal: PivotProposal;
  /** The authorisation (card hold) the pivot captures. */
  readonly paymentIntent: string;
  /** The draft ticket the pivot opens. */
  readonly ticketKey: string;
  /** The email draft's step key; the harness keeps drafts itself (`email_drafts`), by this key. */
  readonly draftKey: string;
}

function confirmedRef(what: string, o: CallOutcome): { externalRef: string; idempotencyKey: string } {
  if (o.status !== 'CONFIRMED' || !o.externalRef)
    throw new Error(`${what} did not settle as CONFIRMED with an external ref: ${describeOutcome(o)}`);
  return { externalRef: o.externalRef, idempotencyKey: o.idempotencyKey };
}

/** Plays the agent up to the proposal; the run is then AWAITING_APPROVAL. */
export async function stagePivot(saga: SagaClient, runId: string): Promise<StagedPivot> {
  act(
    1,
    `POST /v1/runs { runId: "${runId}", definition: { name: "refund_and_reship_pivot" } } ` +
      '(its policy: requirePivot); get_order (pure)',
  );
  const created = await saga.createRun({
    runId,
    definition: { name: 'refund_and_reship_pivot' },
    goal: `Refund and reship order ${ORDER_ID}, behind one approval`,
    actor: 'demo-support-agent',
    metadata: { customer: CUSTOMER.id, order: ORDER_ID },
  });
  answer(`${created.created ? 201 : 200} ${created.status}`);
  const agent = saga.run(runId);
  const order = await agent.call('get_order', { orderId: ORDER_ID });
  answer(`get_order ${order.status} ${'result' in order ? JSON.stringify(order.result) : ''}`);

  act(2, 'before the pivot only what can be undone: the email draft, the ticket draft, the card hold');
  const draft = await retryUntilSettled(() => agent.call('create_email_draft', EMAIL, { waitMs: 5_000 }));
  answer(`create_email_draft  ${describeOutcome(draft)}`);
  const ticket = await retryUntilSettled(() =>
    agent.call(
      'create_ticket_draft',
      { summary: `Refund for order #${ORDER_ID}`, orderId: ORDER_ID },
      { waitMs: 5_000 },
    ),
  );
  answer(`create_ticket_draft ${describeOutcome(ticket)}`);
  const hold = await retryUntilSettled(() =>
    agent.call(
      'authorize_payment',
      { customerId: CUSTOMER.id, ...AMOUNT, reason: `Refund order ${ORDER_ID}` },
      { waitMs: 5_000 },
    ),
  );
  answer(`authorize_payment   ${describeOutcome(hold)}`);
  aside('a draft only the harness holds, a ticket outside the team queue, money held but not taken');

  act(3, 'the agent tries send_email before any pivot');
  try {
    const sent = await agent.call('send_email', EMAIL);
    throw new Error(`send_email before the pivot was not refused: ${describeOutcome(sent)}`);
  } catch (e) {
    if (!(e instanceof SagaApiError) || e.code !== ApiErrorCode.PIVOT_REQUIRED) throw e;
    answer(`POST /v1/runs/${runId}/calls send_email → ${e.status} ${e.code}: ${e.message}`);
    aside('refused before anything was written: an irreversible call needs the approved pivot');
  }

  const staged = {
    paymentIntent: confirmedRef('authorize_payment', hold).externalRef,
    ticketKey: confirmedRef('create_ticket_draft', ticket).externalRef,
    draftKey: confirmedRef('create_email_draft', draft).idempotencyKey,
  };
  act(4, 'the agent proposes the pivot: capture the hold, open the ticket, send the email');
  const proposal = await saga.pivot(runId, {
    summary: `Refund order ${ORDER_ID}: capture the 49.00 EUR hold, open the ticket, email the customer`,
    commit: [
      { tool: 'capture_payment', args: { paymentIntent: staged.paymentIntent } },
      { tool: 'open_ticket', args: { ticket: staged.ticketKey } },
      { tool: 'send_email', args: EMAIL },
    ],
  });
  answer(`POST /v1/runs/${runId}/pivot → 202 ${JSON.stringify(proposal)}`);
  return { runId, proposal, ...staged };
}
