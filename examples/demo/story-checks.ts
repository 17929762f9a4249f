/**
 * What the story must come out as, checked from the sandbox's ledger and the run's log, so that the demo
 * doubles as a smoke test: each check that fails is one line saying what was expected and what was seen.
 */
import type { RunView } from '@agent-saga/client';
import { z } from 'zod';
import type { LedgerCounts } from './ledger-printer.js';
import type { NaiveRun } from './naive-agent.js';
import type { Ledger } from './sandbox-admin.js';

/** The review items of a run (`GET /v1/runs/{id}`), which the client keeps as unknown fields. */
export const reviewSchema = z.object({
  corrections: z.array(z.looseObject({ stepIdx: z.number(), status: z.string(), command: z.unknown() })),
  cases: z.array(z.looseObject({ stepIdx: z.number().nullable(), reason: z.string(), status: z.string() })),
});
export type RunReview = z.infer<typeof reviewSchema>;

/** Pushes one line onto `failures` unless `seen` equals `expected` (as JSON). */
export function expectEqual(failures: string[], what: string, seen: unknown, expected: unknown): void {
  if (JSON.stringify(seen) !== JSON.stringify(expected))
    failures.push(`${what}: expected ${JSON.stringify(expected)}, saw ${JSON.stringify(seen)}`);
}

/** The harness's story: one ticket closed with a reason, one charge refunded once, no email, COMPENSATED. */
export function harnessFailures(
  ledger: Ledger,
  counts: LedgerCounts,
  run: RunView,
  review: RunReview,
): string[] {
  const f: string[] = [];
  expectEqual(f, 'run status', run.status, 'COMPENSATED');
  expectEqual(
    f,
    'steps (tool, status, compensation)',
    run.steps.map((s) => [s.tool, s.status, s.compensationStatus]),
    [
      ['create_ticket', 'CONFIRMED', 'compensated'],
      ['charge_card', 'CONFIRMED', 'compensated'],
      ['reship', 'FAILED', 'skipped'],
    ],
  );
  expectEqual(f, 'tickets in Jira', counts.ticketsCreated, 1);
  expectEqual(f, 'tickets closed', counts.ticketsClosed, 1);
  const ticket = ledger.jira.issues[0];
  if (ticket && ticket.comments.length !== 1)
    f.push(`ticket ${ticket.key}: expected one closing comment (the reason), saw ${ticket.comments.length}`);
  expectEqual(f, 'charges at Stripe', counts.charges, 1);
  expectEqual(f, 'refunds at Stripe', counts.refunds, 1);
  const charge = ledger.stripe.paymentIntents[0];
  if (charge && ledger.stripe.refunds[0]?.payment_intent !== charge.id)
    f.push(`the refund is not of the charge ${charge.id}`);
  expectEqual(f, 'money still taken', counts.stillTaken, 0);
  expectEqual(f, 'emails sent (to anyone)', ledger.email.emails.length, 0);
  expectEqual(f, 'shipments', counts.shipments, 0);
  expectEqual(f, 'corrections queued for a person', review.corrections.length, 0);
  expectEqual(f, 'manual-intervention cases', review.cases.length, 0);
  return f;
}

/** The naive run's damage, read from the ledger and its own transcript. */
export interface NaiveDamage {
  /** Closes of a ticket the transcript took for the order's ticket while another, never seen, stays open. */
  readonly ghostCloses: readonly { readonly closed: string; readonly leftOpen: readonly string[] }[];
  /** Apology emails about a charge whose receipt the customer never got (no `receipt_email`). */
  readonly apologiesForUnseenCharges: number;
}

export function naiveDamage(ledger: Ledger, naive: NaiveRun): NaiveDamage {
  const seenInTranscript = (key: string) =>
    naive.transcript.some((e) => JSON.stringify(e.body).includes(key));
  const openUnseen = ledger.jira.issues
    .filter((i) => i.statusCategory !== 'done' && !seenInTranscript(i.key))
    .map((i) => i.key);
  const unseenCharges = ledger.stripe.paymentIntents.filter(
    (p) => p.amount_received > 0 && p.receipt_email === null,
  );
  return {
    ghostCloses:
      openUnseen.length > 0 ? naive.closed.map((closed) => ({ closed, leftOpen: openUnseen })) : [],
    apologiesForUnseenCharges: unseenCharges.length > 0 ? naive.apologisedTo.length : 0,
  };
}

/**
 * The naive run must show the damage the same faults cause without a harness; if it does not, the
 * comparison printed beside the harness's result would be a lie.
 */
export function naiveFailures(counts: LedgerCounts, damage: NaiveDamage): string[] {
  const f: string[] = [];
  expectEqual(f, 'naive: tickets in Jira', counts.ticketsCreated, 2);
  expectEqual(f, 'naive: charges at Stripe', counts.charges, 2);
  if (damage.ghostCloses.length === 0) f.push('naive: expected a ghost close, saw none');
  if (damage.apologiesForUnseenCharges === 0)
    f.push('naive: expected an apology for an unseen charge, saw none');
  return f;
}
