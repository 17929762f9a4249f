/**
 * What one pivot run left behind, counted from the sandbox's ledger (the sandbox is reset before each run,
 * so its ledger holds that run's effects alone) and from the email drafts the harness keeps itself; and
 * the two runs' counts side by side.
 */
import { withEmailDrafts } from '@agent-saga/connectors';
import type { SagaDb } from '@agent-saga/core';
import { money, printColumns } from './ledger-printer.js';
import type { Ledger } from './sandbox-admin.js';

export interface PivotCounts {
  /** Authorisations still holding money (`requires_capture`). */
  readonly holdsOpen: number;
  readonly holdsCancelled: number;
  /** PaymentIntents that took money. */
  readonly captures: number;
  readonly refunds: number;
  /** Captured less refunded, in minor units. */
  readonly moneyTaken: number;
  /** Tickets outside the team's queue (Jira status `Draft`). */
  readonly ticketDrafts: number;
  /** Tickets in the team's queue and not done. */
  readonly ticketsOpen: number;
  readonly emailsToCustomer: number;
  /** The run's email drafts, by their status in `email_drafts` (`draft` or `deleted`). */
  readonly emailDrafts: Readonly<Record<string, number>>;
}

export async function countPivotRun(
  ledger: Ledger,
  db: SagaDb,
  draftKey: string,
  customerEmail: string,
): Promise<PivotCounts> {
  const intents = ledger.stripe.paymentIntents;
  const issues = ledger.jira.issues;
  const drafts = await withEmailDrafts(db)
    .selectFrom('email_drafts')
    .select('status')
    .where('idempotency_key', '=', draftKey)
    .execute();
  const emailDrafts: Record<string, number> = {};
  for (const d of drafts) emailDrafts[d.status] = (emailDrafts[d.status] ?? 0) + 1;
  const recipients = (to: string | readonly string[]) => (typeof to === 'string' ? [to] : to);
  return {
    holdsOpen: intents.filter((p) => p.status === 'requires_capture').length,
    holdsCancelled: intents.filter((p) => p.status === 'canceled').length,
    captures: intents.filter((p) => p.amount_received > 0).length,
    refunds: ledger.stripe.refunds.length,
    moneyTaken: intents.reduce((sum, p) => sum + p.amount_received - p.amount_refunded, 0),
    ticketDrafts: issues.filter((i) => i.status === 'Draft').length,
    ticketsOpen: issues.filter((i) => i.status !== 'Draft' && i.statusCategory !== 'done').length,
    emailsToCustomer: ledger.email.emails.filter((e) => recipients(e.to).includes(customerEmail)).length,
    emailDrafts,
  };
}

/** The email drafts of a run in words: `1 deleted`, `1 draft`, `none`. */
const draftsInWords = (d: PivotCounts['emailDrafts']): string =>
  Object.entries(d)
    .map(([status, n]) => `${n} ${status}`)
    .join(', ') || 'none';

/** Two pivot runs' counts in two columns, headed by how each pivot was decided. */
export function printPivotSideBySide(
  headings: readonly [string, string],
  left: PivotCounts,
  right: PivotCounts,
): void {
  const rows: readonly [string, (c: PivotCounts) => string][] = [
    ['card holds still open', (c) => String(c.holdsOpen)],
    ['card holds cancelled', (c) => String(c.holdsCancelled)],
    ['captures', (c) => String(c.captures)],
    ['refunds', (c) => String(c.refunds)],
    ['money taken', (c) => money(c.moneyTaken)],
    ['ticket drafts', (c) => String(c.ticketDrafts)],
    ['tickets open', (c) => String(c.ticketsOpen)],
    ['email drafts', (c) => draftsInWords(c.emailDrafts)],
    ['emails to the customer', (c) => String(c.emailsToCustomer)],
  ];
  printColumns(
    headings,
    rows.map(([label, value]) => [label, value(left), value(right)] as const),
  );
}
