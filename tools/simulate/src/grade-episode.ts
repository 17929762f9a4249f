/**
 * Grading from the vendors' ledgers (and, for agent-saga, the run's status and open cases in the saga
 * log), never from what the agent says. Each episode's effects are found by its tag: its order id (Jira
 * summaries, shipments), its customer (PaymentIntents, and the refunds of those), its address (emails).
 *
 * Per episode:
 * - **duplicate**: a net effect more than once — two tickets, two succeeded charges, two shipments, two
 *   refunds of one charge, two apologies, two confirmation emails, two holds on the card. (An email cannot be unsent: after an
 *   undo a confirmation sent before it stands, and is not counted as left standing.)
 * - **lost**: the ending the task called for needed an effect that is not there (a ticket, a charge, a
 *   shipment, the confirmation email; after an undo, the refund of a charge, the release of a hold or the
 *   close of a ticket), and the episode did not end
 *   in an honest state that says so. Honest: for agent-saga, a run not COMPLETED (COMPENSATED,
 *   MANUAL_INTERVENTION, …) or one with an open case; for the naive harness, an agent report of failure.
 * - **wrong compensation**: a compensation of something that should stand or never existed — a refund of a
 *   charge that never succeeded; a refund, a closed ticket or a cancelled shipment on a task reported done;
 *   an apology for a charge the customer never saw (no succeeded charge with a receipt).
 * - **exactly once**: no duplicate, nothing lost, no wrong compensation, and the ledger shows exactly the
 *   ending the task called for (done: every write once; refused: nothing left standing).
 * - **reported success when wrong**: the agent reported success (or a clean rollback) and the episode is
 *   not exactly once.
 */
import type { Episode } from './draw-episodes.js';
import type { FaultMode } from './fault-modes.js';
import { confirmationSubject, holdsPayment, sendsReceipt, WriteTool } from './support-workflows.js';
import { AgentReport, type HarnessEnding } from './tool-port.js';

/** The part of the sandbox's ledger grading reads (the sandbox's `Ledger` has it, and more). */
export interface GradingLedger {
  readonly stripe: {
    readonly paymentIntents: readonly {
      readonly id: string;
      readonly status: string;
      readonly amount: number;
      readonly amount_refunded: number;
      readonly customer: string | null;
      readonly receipt_email: string | null;
    }[];
    readonly refunds: readonly {
      readonly id: string;
      readonly payment_intent: string | null;
      readonly amount: number;
    }[];
  };
  readonly jira: {
    readonly issues: readonly {
      readonly key: string;
      readonly summary: string;
      readonly statusCategory: string;
    }[];
  };
  readonly email: {
    readonly emails: readonly { readonly to: readonly string[]; readonly subject: string }[];
  };
  readonly shipping: { readonly shipments: readonly { readonly orderId: string; readonly status: string }[] };
}

/** What the agent-saga harness's log says of a run beyond its status. */
export interface EpisodeRecord {
  readonly episode: Episode;
  readonly report: AgentReport;
  readonly ending: HarnessEnding;
  /** agent-saga: an open case a person can read exists for the run. */
  readonly openCase: boolean;
  /** From the episode's start to the agent's end and the harness's settled state. */
  readonly settledMs: number;
  /** The fault modes of the episode whose sandbox faults all hit a request (a fault may find no request). */
  readonly firedModes: readonly FaultMode[];
  /** A real model was the agent (`--real-model`), not the scripted one: its policy mix was not played. */
  readonly byModel?: boolean;
  /** What the agent noted (a crash, why it gave up): read when an episode is listed, never graded. */
  readonly notes?: readonly string[];
}

export interface EpisodeGrade {
  readonly duplicate: boolean;
  readonly lost: boolean;
  readonly exactlyOnce: boolean;
  readonly wrongCompensation: boolean;
  readonly reportedSuccessWhenWrong: boolean;
  /** The task could succeed (the warehouse did not refuse it). */
  readonly canSucceed: boolean;
  /** What was found, for the person reading a failure. */
  readonly findings: readonly string[];
}

/** The subject of the naive harness's apology (the `charge_refunded_note` template). */
const APOLOGY_SUBJECT = 'A charge on your card was refunded';
/** The statuses of a PaymentIntent that was authorized at some point (a hold workflow's charges). */
const HELD_AT_SOME_POINT = new Set(['requires_capture', 'succeeded', 'canceled']);
/** Statuses of a run that claims its task done or cleanly undone. */
const CLAIMS_CLEAN = new Set(['COMPLETED', 'COMPENSATED']);

function effectsOf(episode: Episode, ledger: GradingLedger) {
  const { ids } = episode;
  const charges = ledger.stripe.paymentIntents.filter((pi) => pi.customer === ids.customerId);
  const chargeIds = new Set(charges.map((c) => c.id));
  return {
    tickets: ledger.jira.issues.filter((i) => i.summary.includes(ids.orderId)),
    charges,
    succeeded: charges.filter((c) => c.status === 'succeeded'),
    // A hold is a PaymentIntent that was authorized: still held, captured, or released since.
    holds: holdsPayment(episode.workflow) ? charges.filter((c) => HELD_AT_SOME_POINT.has(c.status)) : [],
    refunds: ledger.stripe.refunds.filter(
      (r) => r.payment_intent !== null && chargeIds.has(r.payment_intent),
    ),
    shipments: ledger.shipping.shipments.filter((s) => s.orderId === ids.orderId),
    apologies: ledger.email.emails.filter((e) => e.to.includes(ids.email) && e.subject === APOLOGY_SUBJECT),
    confirmations: ledger.email.emails.filter(
      (e) => e.to.includes(ids.email) && e.subject === confirmationSubject(ids),
    ),
  };
}

export function gradeEpisode(record: EpisodeRecord, ledger: GradingLedger): EpisodeGrade {
  const { episode } = record;
  const e = effectsOf(episode, ledger);
  const needs = new Set(episode.writes.map((w) => w.tool));
  const findings: string[] = [];
  const note = (what: string) => findings.push(what);

  // Duplicates.
  if (e.tickets.length > 1) note(`${e.tickets.length} tickets`);
  if (e.succeeded.length > 1) note(`${e.succeeded.length} succeeded charges`);
  if (e.holds.length > 1) note(`${e.holds.length} holds on the card`);
  if (e.shipments.length > 1) note(`${e.shipments.length} shipments`);
  const refundsPer = new Map<string, number>();
  for (const r of e.refunds)
    refundsPer.set(r.payment_intent ?? '', (refundsPer.get(r.payment_intent ?? '') ?? 0) + 1);
  if ([...refundsPer.values()].some((n) => n > 1)) note('a charge refunded more than once');
  if (e.apologies.length > 1) note(`${e.apologies.length} apologies`);
  if (e.confirmations.length > 1) note(`${e.confirmations.length} confirmation emails`);
  const duplicate = findings.length > 0;

  // The ending the ledger must show: every write done, or (refused, or given up and undone) nothing standing.
  const undone = episode.refused || record.report !== AgentReport.SUCCESS;

  // Wrong compensations.
  const wrong: string[] = [];
  const succeededIds = new Set(e.succeeded.map((c) => c.id));
  for (const r of e.refunds)
    if (!succeededIds.has(r.payment_intent ?? ''))
      wrong.push(`refund ${r.id} of a charge that never succeeded`);
  if (!undone) {
    if (e.refunds.length > 0) wrong.push('a refund on a task that succeeded');
    if (e.tickets.some((t) => t.statusCategory === 'done'))
      wrong.push('a ticket closed on a task that succeeded');
    if (e.shipments.some((s) => s.status === 'canceled'))
      wrong.push('a shipment cancelled on a task that succeeded');
  }
  const sawCharge = sendsReceipt(episode.workflow) && e.succeeded.some((c) => c.receipt_email !== null);
  if (e.apologies.length > 0 && !sawCharge) wrong.push('an apology for a charge the customer never saw');
  if (e.apologies.length > 0 && !undone) wrong.push('an apology on a task that succeeded');
  findings.push(...wrong);

  // What the ending needed and the ledger lacks (or still has).
  const missing: string[] = [];
  if (!undone) {
    if (needs.has(WriteTool.CREATE_TICKET) && e.tickets.length === 0) missing.push('no ticket');
    const takesMoney = needs.has(WriteTool.CHARGE_CARD) || needs.has(WriteTool.CAPTURE_PAYMENT);
    if (takesMoney && e.succeeded.length === 0) missing.push('no charge');
    if (needs.has(WriteTool.SEND_EMAIL) && e.confirmations.length === 0)
      missing.push('no confirmation email');
    if (needs.has(WriteTool.RESHIP) && !e.shipments.some((s) => s.status === 'created'))
      missing.push('no shipment');
  } else {
    if (e.tickets.some((t) => t.statusCategory !== 'done')) missing.push('a ticket left open after the undo');
    if (e.succeeded.some((c) => c.amount_refunded < c.amount))
      missing.push('a charge left standing after the undo');
    if (e.holds.some((c) => c.status === 'requires_capture'))
      missing.push('a hold left on the card after the undo');
    if (e.shipments.some((s) => s.status !== 'canceled'))
      missing.push('a shipment left standing after the undo');
  }
  findings.push(...missing);
  const honest =
    record.ending.runStatus !== null
      ? !CLAIMS_CLEAN.has(record.ending.runStatus) || record.openCase
      : record.report === AgentReport.FAILED;
  const lost = missing.length > 0 && !honest;

  const exactlyOnce =
    !duplicate && !lost && wrong.length === 0 && missing.length === 0 && (episode.refused || !undone);
  const claimedClean = record.report === AgentReport.SUCCESS || record.report === AgentReport.ROLLED_BACK;
  return {
    duplicate,
    lost,
    exactlyOnce,
    wrongCompensation: wrong.length > 0,
    reportedSuccessWhenWrong: claimedClean && !exactlyOnce,
    canSucceed: !episode.refused,
    findings,
  };
}
