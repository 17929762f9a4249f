/**
 * The support agent's saga definitions, exported by its tool module (`definitions`) beside the tools they
 * name. Both play the refund-and-reship incident: `refund_and_reship` as `pnpm demo` runs it, every step
 * undoable, so no pivot; `refund_and_reship_pivot` as `pnpm demo:pivot` runs it, with only what can be
 * undone before the pivot (a read, two drafts, a card hold) and the capture, the ticket and the email
 * after it, under one approval. A step that declares no `dependsOn` stands after every earlier step.
 */
import { defineSaga, type SagaDefinition } from '@agent-saga/core';
import { refundAndReshipInvariant } from './refund-and-reship-invariant.js';

/**
 * Look the order up, open a ticket, charge the card for the replacement, ship it. Its invariant, checked
 * against Stripe and the warehouse before a run of it ends: a confirmed reship with exactly one charge not
 * refunded, or no live shipment and no net charge (`refundAndReshipInvariant`).
 */
export const refundAndReship: SagaDefinition = defineSaga({
  name: 'refund_and_reship',
  version: 1,
  steps: [
    { id: 'get_order', tool: 'get_order' },
    { id: 'create_ticket', tool: 'create_ticket' },
    { id: 'charge_card', tool: 'charge_card' },
    { id: 'reship', tool: 'reship' },
  ],
  invariant: refundAndReshipInvariant,
});

/**
 * The same story around a pivot: `capture_payment` is the pivot (the go/no-go step, the first one the
 * approval commits), so `send_email`, the one irreversible step, stands after it. The policy is the one the
 * pivot demo creates its runs with (stored, not applied to runs yet).
 */
export const refundAndReshipPivot: SagaDefinition = defineSaga({
  name: 'refund_and_reship_pivot',
  version: 1,
  steps: [
    { id: 'get_order', tool: 'get_order' },
    { id: 'create_email_draft', tool: 'create_email_draft' },
    { id: 'create_ticket_draft', tool: 'create_ticket_draft' },
    { id: 'authorize_payment', tool: 'authorize_payment' },
    { id: 'capture_payment', tool: 'capture_payment', pivot: true },
    { id: 'open_ticket', tool: 'open_ticket' },
    { id: 'send_email', tool: 'send_email' },
  ],
  policy: { requirePivot: true },
});

/** Every definition of the support agent, as its tool module exports them. */
export const supportAgentSagas: readonly SagaDefinition[] = [refundAndReship, refundAndReshipPivot];
