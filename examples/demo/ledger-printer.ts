/**
 * The sandbox's ledger, printed: every effect that exists at the vendors (net effects, not calls), and the
 * counts of both modes side by side.
 */
import { say } from './narration.js';
import type { Ledger } from './sandbox-admin.js';

/** What the incident left behind, counted from a ledger. */
export interface LedgerCounts {
  readonly ticketsCreated: number;
  readonly ticketsClosed: number;
  readonly ticketsOpen: number;
  /** PaymentIntents that took money. */
  readonly charges: number;
  readonly refunds: number;
  /** Captured less refunded, over every charge, in minor units. */
  readonly stillTaken: number;
  readonly emailsToCustomer: number;
  readonly shipments: number;
}

export function countLedger(ledger: Ledger, customerEmail: string): LedgerCounts {
  const issues = ledger.jira.issues;
  const closed = issues.filter((i) => i.statusCategory === 'done').length;
  const charged = ledger.stripe.paymentIntents.filter((p) => p.amount_received > 0);
  const recipients = (to: string | readonly string[]) => (typeof to === 'string' ? [to] : to);
  return {
    ticketsCreated: issues.length,
    ticketsClosed: closed,
    ticketsOpen: issues.length - closed,
    charges: charged.length,
    refunds: ledger.stripe.refunds.length,
    stillTaken: charged.reduce((sum, p) => sum + p.amount_received - p.amount_refunded, 0),
    emailsToCustomer: ledger.email.emails.filter((e) => recipients(e.to).includes(customerEmail)).length,
    shipments: ledger.shipping.shipments.length,
  };
}

/** Minor units as `49.00 EUR`. */
export const money = (minor: number, currency = 'eur') =>
  `${(minor / 100).toFixed(2)} ${currency.toUpperCase()}`;

/** Every effect in the ledger, one line each. */
export function printLedger(ledger: Ledger): void {
  say('  jira tickets:');
  for (const i of ledger.jira.issues) {
    say(`    ${i.key}  ${i.status.padEnd(6)} "${i.summary}"  labels ${JSON.stringify(i.labels)}`);
    for (const c of i.comments) say(`          comment: "${c.text.replace(/\s+/g, ' ').trim()}"`);
  }
  if (ledger.jira.issues.length === 0) say('    (none)');
  say('  stripe charges:');
  for (const p of ledger.stripe.paymentIntents)
    say(
      `    ${p.id}  ${p.status}  ${money(p.amount_received, p.currency)} taken, ${money(p.amount_refunded, p.currency)} refunded  key ${p.idempotencyKey ?? '(none)'}`,
    );
  if (ledger.stripe.paymentIntents.length === 0) say('    (none)');
  say('  stripe refunds:');
  for (const r of ledger.stripe.refunds)
    say(
      `    ${r.id}  of ${r.payment_intent ?? '?'}  ${money(r.amount)}  ${r.status}  key ${r.idempotencyKey ?? '(none)'}`,
    );
  if (ledger.stripe.refunds.length === 0) say('    (none)');
  say('  emails:');
  for (const e of ledger.email.emails) say(`    ${e.id}  to ${JSON.stringify(e.to)}  "${e.subject}"`);
  if (ledger.email.emails.length === 0) say('    (none)');
  say('  shipments:');
  for (const s of ledger.shipping.shipments) say(`    ${s.id}  ${s.status}  order ${s.orderId}`);
  if (ledger.shipping.shipments.length === 0) say('    (none)');
}

/** Labelled rows of two values, under two column headings, right-aligned. */
export function printColumns(
  headings: readonly [string, string],
  rows: readonly (readonly [string, string, string])[],
): void {
  say(`  ${''.padEnd(24)} ${headings[0].padStart(10)} ${headings[1].padStart(10)}`);
  for (const [label, left, right] of rows)
    say(`  ${label.padEnd(24)} ${left.padStart(10)} ${right.padStart(10)}`);
}

/** The two modes' counts in two columns. */
export function printSideBySide(harness: LedgerCounts, naive: LedgerCounts): void {
  const rows: readonly [string, (c: LedgerCounts) => string][] = [
    ['tickets created', (c) => String(c.ticketsCreated)],
    ['tickets closed', (c) => String(c.ticketsClosed)],
    ['tickets still open', (c) => String(c.ticketsOpen)],
    ['charges', (c) => String(c.charges)],
    ['refunds', (c) => String(c.refunds)],
    ['money still taken', (c) => money(c.stillTaken)],
    ['emails to the customer', (c) => String(c.emailsToCustomer)],
    ['shipments', (c) => String(c.shipments)],
  ];
  printColumns(
    ['harness', 'naive'],
    rows.map(([label, value]) => [label, value(harness), value(naive)] as const),
  );
}
