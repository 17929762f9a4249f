/**
 * Checks on the sandbox's ledger, the effects that exist in the four vendors, counted per order rather
 * than per call: no duplicate net effect (one ticket, one charge, at most one refund, at most one
 * shipment per order), no effect no run asked for, no email, and, for every run that reached the ending
 * its story calls for, the effects that ending means (shipped: ticket open, card charged and not refunded,
 * one shipment; refused: ticket closed, the charge refunded in full once, no shipment).
 *
 * A run's effects are found by the keys its steps carried: keys are derived from (run, step, tool), never
 * from the model's words, so a duplicate made by the harness carries the same key (the Jira label
 * `saga-<key>`, the PaymentIntent's creating key) and shows here; shipments are counted by order id.
 */
import { stepKey } from '@agent-saga/core';
import type { AgentPlan } from './scripted-agent.js';
import type { SagaLogView } from './read-saga-log.js';
import type { SoakLedger } from './sandbox-admin.js';
import { checkNone, type Check } from './soak-report.js';

interface RunEffects {
  readonly plan: AgentPlan;
  readonly tickets: SoakLedger['jira']['issues'];
  readonly charges: SoakLedger['stripe']['paymentIntents'];
  readonly refunds: SoakLedger['stripe']['refunds'];
  readonly shipments: SoakLedger['shipping']['shipments'];
}

/** The step keys of one run: from the log when the step is there, else as the harness derives them. */
function keysOf(plan: AgentPlan, log: SagaLogView) {
  const logged = (idx: number, tool: string) =>
    log.steps.find((s) => s.runId === plan.runId && s.stepIdx === idx)?.idempotencyKey ??
    stepKey(plan.runId, idx, tool);
  return {
    ticket: logged(0, 'create_ticket'),
    charge: logged(1, 'charge_card'),
  };
}

function effectsOf(plan: AgentPlan, ledger: SoakLedger, log: SagaLogView): RunEffects {
  const k = keysOf(plan, log);
  const charges = ledger.stripe.paymentIntents.filter(
    (pi) => pi.idempotencyKey === k.charge || pi.metadata.saga_key === k.charge,
  );
  const chargeIds = new Set(charges.map((c) => c.id));
  return {
    plan,
    tickets: ledger.jira.issues.filter((i) => i.labels.includes(`saga-${k.ticket}`)),
    charges,
    refunds: ledger.stripe.refunds.filter(
      (r) => r.payment_intent !== null && chargeIds.has(r.payment_intent),
    ),
    shipments: ledger.shipping.shipments.filter((s) => s.orderId === plan.orderId),
  };
}

export function checkLedger(plans: readonly AgentPlan[], ledger: SoakLedger, log: SagaLogView): Check[] {
  const effects = plans.map((p) => effectsOf(p, ledger, log));
  const over = (what: string, pick: (e: RunEffects) => readonly unknown[], max: number) =>
    effects
      .filter((e) => pick(e).length > max)
      .map(
        (e) =>
          `order ${e.plan.orderId} (run ${e.plan.runId}): ${pick(e).length} ${what}: ${JSON.stringify(pick(e))}`,
      );

  // Effects that belong to no run of the soak.
  const ours = {
    tickets: new Set(effects.flatMap((e) => e.tickets.map((t) => t.id))),
    charges: new Set(effects.flatMap((e) => e.charges.map((c) => c.id))),
    refunds: new Set(effects.flatMap((e) => e.refunds.map((r) => r.id))),
    orders: new Set(plans.map((p) => p.orderId)),
  };
  const stray = [
    ...ledger.jira.issues
      .filter((i) => !ours.tickets.has(i.id))
      .map((i) => `Jira issue ${i.key} labels ${i.labels.join(',')}`),
    ...ledger.stripe.paymentIntents
      .filter((pi) => !ours.charges.has(pi.id))
      .map((pi) => `PaymentIntent ${pi.id} (${pi.status}, key ${pi.idempotencyKey ?? 'none'})`),
    ...ledger.stripe.refunds
      .filter((r) => !ours.refunds.has(r.id))
      .map((r) => `refund ${r.id} of ${r.payment_intent ?? '?'}`),
    ...ledger.shipping.shipments
      .filter((s) => !ours.orders.has(s.orderId))
      .map((s) => `shipment ${s.id} of order ${s.orderId}`),
  ];

  const finished = effects.filter(
    (e) => log.runs.get(e.plan.runId)?.status === (e.plan.refused ? 'COMPENSATED' : 'COMPLETED'),
  );
  const mismatches = finished.flatMap((e) => {
    const what: string[] = [];
    const ticket = e.tickets[0];
    const charge = e.charges[0];
    const refunded = charge?.amount_refunded ?? 0;
    if (!ticket) what.push('no ticket');
    if (!charge) what.push('no charge');
    else if (charge.status !== 'succeeded') what.push(`charge ${charge.id} is ${charge.status}`);
    if (e.plan.refused) {
      if (ticket && ticket.statusCategory !== 'done')
        what.push(`ticket ${ticket.key} still ${ticket.status}`);
      if (charge && refunded !== charge.amount)
        what.push(`charge ${charge.id} refunded ${refunded} of ${charge.amount}`);
      const live = e.shipments.filter((s) => s.status !== 'canceled');
      if (live.length > 0) what.push(`${live.length} shipment(s) not canceled`);
    } else {
      if (ticket && ticket.statusCategory === 'done')
        what.push(`ticket ${ticket.key} closed (${ticket.status})`);
      if (refunded > 0 || e.refunds.length > 0) what.push(`charge refunded (${refunded})`);
      if (e.shipments.filter((s) => s.status === 'created').length !== 1)
        what.push(`shipments: ${JSON.stringify(e.shipments.map((s) => s.status))}`);
    }
    return what.length === 0
      ? []
      : [
          `order ${e.plan.orderId} (run ${e.plan.runId}, ${log.runs.get(e.plan.runId)?.status ?? '?'}): ${what.join('; ')}`,
        ];
  });

  return [
    checkNone(
      'one ticket per order (no duplicate Jira issue)',
      over('tickets', (e) => e.tickets, 1),
    ),
    checkNone(
      'one charge per order (no duplicate PaymentIntent)',
      over('charges', (e) => e.charges, 1),
    ),
    checkNone(
      'at most one refund per order',
      over('refunds', (e) => e.refunds, 1),
    ),
    checkNone(
      'at most one shipment per order',
      over('shipments', (e) => e.shipments, 1),
    ),
    checkNone('no effect in the vendors that no run of the soak asked for', stray),
    checkNone(
      'no email was sent (the story sends none)',
      ledger.email.emails.map((m) => `email ${m.id} (key ${m.idempotencyKey ?? 'none'})`),
    ),
    checkNone(
      `the net effect of every run that reached its ending matches it (${finished.length} runs)`,
      mismatches,
      [
        `${ledger.jira.issues.length} tickets, ${ledger.stripe.paymentIntents.length} charges, ` +
          `${ledger.stripe.refunds.length} refunds, ${ledger.shipping.shipments.length} shipments in the ledger`,
      ],
    ),
  ];
}
