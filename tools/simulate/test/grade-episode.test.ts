/**
 * Grading on hand-made ledgers: each rule of grade-episode.ts on the smallest ledger that shows it, and
 * the same ledger without the fault graded clean, so a rule that never fires cannot pass.
 */
import { describe, expect, it } from 'vitest';
import { drawEpisode, type Episode } from '../src/draw-episodes.js';
import { gradeEpisode, type EpisodeRecord, type GradingLedger } from '../src/grade-episode.js';
import { partitionLedger, partOf } from '../src/partition-ledger.js';
import { episodeIds, pivotAt, Workflow, writesOf } from '../src/support-workflows.js';
import { AgentReport } from '../src/tool-port.js';

function episode(workflow: Workflow, refused = false): Episode {
  const ids = episodeIds(1, 1, 'TEE-L');
  return {
    index: 1,
    ids,
    workflow,
    writes: writesOf(workflow, ids),
    pivotAt: pivotAt(workflow),
    refused,
    faults: [],
    policies: [],
    crashAfterWrite: undefined,
    replans: [],
  };
}

const ep = episode(Workflow.REFUND_AND_RESHIP);
const { ids } = ep;

const charge = (id: string, over: Partial<GradingLedger['stripe']['paymentIntents'][number]> = {}) => ({
  id,
  status: 'succeeded',
  amount: 4_900,
  amount_refunded: 0,
  customer: ids.customerId,
  receipt_email: null,
  ...over,
});
const ticket = (key: string, statusCategory = 'new') => ({
  key,
  summary: `Refund for order #${ids.orderId}`,
  statusCategory,
});
const shipment = (status = 'created') => ({ orderId: ids.orderId, status });

/** The ledger of `ep` done exactly once: one open ticket, one charge, one shipment. */
function doneOnce(): GradingLedger {
  return {
    stripe: { paymentIntents: [charge('pi_one')], refunds: [] },
    jira: { issues: [ticket('SUP-1')] },
    email: { emails: [] },
    shipping: { shipments: [shipment()] },
  };
}

const record = (
  e: Episode,
  report: AgentReport,
  runStatus: string | null = null,
  openCase = false,
): EpisodeRecord => ({
  episode: e,
  report,
  ending: { runStatus },
  openCase,
  settledMs: 10,
  firedModes: [],
});

describe('grading a refund-and-reship episode from its ledger', () => {
  it('grades the task done once as exactly once, and nothing else', () => {
    const g = gradeEpisode(record(ep, AgentReport.SUCCESS, 'COMPLETED'), doneOnce());
    expect(g).toMatchObject({
      exactlyOnce: true,
      duplicate: false,
      lost: false,
      wrongCompensation: false,
      reportedSuccessWhenWrong: false,
    });
  });

  it('counts a doubled charge as a duplicate, and the success the agent reported as wrong', () => {
    const l = doneOnce();
    const ledger = { ...l, stripe: { ...l.stripe, paymentIntents: [charge('pi_one'), charge('pi_two')] } };
    const g = gradeEpisode(record(ep, AgentReport.SUCCESS, 'COMPLETED'), ledger);
    expect(g).toMatchObject({ duplicate: true, exactlyOnce: false, reportedSuccessWhenWrong: true });
    expect(g.findings).toContain('2 succeeded charges');
  });

  it('does not count a declined attempt beside the charge as a duplicate', () => {
    const l = doneOnce();
    const ledger = {
      ...l,
      stripe: {
        ...l.stripe,
        paymentIntents: [charge('pi_declined', { status: 'requires_payment_method' }), charge('pi_one')],
      },
    };
    expect(gradeEpisode(record(ep, AgentReport.SUCCESS, 'COMPLETED'), ledger).duplicate).toBe(false);
  });

  it('counts a refund of a charge that never happened as a wrong compensation', () => {
    const undone = episode(Workflow.REFUND_AND_RESHIP, true);
    const ledger: GradingLedger = {
      stripe: {
        paymentIntents: [charge('pi_declined', { status: 'requires_payment_method' })],
        refunds: [{ id: 're_ghost', payment_intent: 'pi_declined', amount: 4_900 }],
      },
      jira: { issues: [ticket('SUP-1', 'done')] },
      email: { emails: [] },
      shipping: { shipments: [] },
    };
    const g = gradeEpisode(record(undone, AgentReport.ROLLED_BACK, 'COMPENSATED'), ledger);
    expect(g).toMatchObject({ wrongCompensation: true, exactlyOnce: false, reportedSuccessWhenWrong: true });
    expect(g.findings).toContain('refund re_ghost of a charge that never succeeded');
    // Without the ghost refund the same undo is clean.
    const clean = { ...ledger, stripe: { ...ledger.stripe, refunds: [] } };
    expect(gradeEpisode(record(undone, AgentReport.ROLLED_BACK, 'COMPENSATED'), clean)).toMatchObject({
      exactlyOnce: true,
      wrongCompensation: false,
    });
  });

  it('counts an apology for a charge the customer never saw as a wrong compensation', () => {
    const receipt = episode(Workflow.REFUND_WITH_RECEIPT, true);
    const ledger: GradingLedger = {
      stripe: { paymentIntents: [], refunds: [] },
      jira: { issues: [] },
      email: { emails: [{ to: [ids.email], subject: 'A charge on your card was refunded' }] },
      shipping: { shipments: [] },
    };
    expect(gradeEpisode(record(receipt, AgentReport.ROLLED_BACK), ledger).wrongCompensation).toBe(true);
  });

  it('counts a missing shipment as lost when the run claims COMPLETED, not when it ended honestly', () => {
    const l = { ...doneOnce(), shipping: { shipments: [] } };
    expect(gradeEpisode(record(ep, AgentReport.SUCCESS, 'COMPLETED'), l).lost).toBe(true);
    // The agent gave up and the run was unwound: the ticket closed, the charge refunded, nobody misled.
    const unwound: GradingLedger = {
      stripe: {
        paymentIntents: [charge('pi_one', { amount_refunded: 4_900 })],
        refunds: [{ id: 're_1', payment_intent: 'pi_one', amount: 4_900 }],
      },
      jira: { issues: [ticket('SUP-1', 'done')] },
      email: { emails: [] },
      shipping: { shipments: [] },
    };
    const g = gradeEpisode(record(ep, AgentReport.FAILED, 'COMPENSATED'), unwound);
    expect(g).toMatchObject({ lost: false, exactlyOnce: false, wrongCompensation: false, canSucceed: true });
    // A run left with an open case is honest too, even if its status claims more.
    expect(gradeEpisode(record(ep, AgentReport.SUCCESS, 'COMPLETED', true), l).lost).toBe(false);
  });

  it('counts a naive agent that reported success over a write that never happened as lost', () => {
    const l = { ...doneOnce(), jira: { issues: [] } };
    const g = gradeEpisode(record(ep, AgentReport.SUCCESS), l);
    expect(g).toMatchObject({ lost: true, reportedSuccessWhenWrong: true });
    expect(gradeEpisode(record(ep, AgentReport.FAILED), l).lost).toBe(false);
  });

  it('counts a charge left standing after an undo as lost when the run says COMPENSATED', () => {
    const undone = episode(Workflow.REFUND_AND_RESHIP, true);
    const ledger: GradingLedger = {
      ...doneOnce(),
      jira: { issues: [ticket('SUP-1', 'done')] },
      shipping: { shipments: [] },
    };
    expect(gradeEpisode(record(undone, AgentReport.ROLLED_BACK, 'COMPENSATED'), ledger).lost).toBe(true);
  });

  it('keeps other episodes out of an episode’s grade', () => {
    const other = drawEpisode(1, 2).ids;
    const l = doneOnce();
    const ledger = {
      ...l,
      stripe: {
        ...l.stripe,
        paymentIntents: [...l.stripe.paymentIntents, charge('pi_other', { customer: other.customerId })],
      },
    };
    expect(gradeEpisode(record(ep, AgentReport.SUCCESS, 'COMPLETED'), ledger).exactlyOnce).toBe(true);
  });
});

describe('grading a hold-and-capture episode (the pivot workflow) from its ledger', () => {
  const pivot = episode(Workflow.REFUND_AND_RESHIP_PIVOT);
  const confirmation = { to: [ids.email], subject: `Your refund for order ${ids.orderId}` };
  const held = (id: string, status: string) => charge(id, { status });
  const captured = (): GradingLedger => ({
    stripe: { paymentIntents: [held('pi_hold', 'succeeded')], refunds: [] },
    jira: { issues: [ticket('SUP-1')] },
    email: { emails: [confirmation] },
    shipping: { shipments: [shipment()] },
  });

  it('grades one captured hold, the ticket, the shipment and the email as exactly once', () => {
    expect(gradeEpisode(record(pivot, AgentReport.SUCCESS, 'COMPLETED'), captured())).toMatchObject({
      exactlyOnce: true,
      duplicate: false,
      lost: false,
    });
  });

  it('counts a second hold as a duplicate, even one released since', () => {
    const l = captured();
    const ledger = {
      ...l,
      stripe: { ...l.stripe, paymentIntents: [...l.stripe.paymentIntents, held('pi_2', 'canceled')] },
    };
    const g = gradeEpisode(record(pivot, AgentReport.SUCCESS, 'COMPLETED'), ledger);
    expect(g).toMatchObject({ duplicate: true, exactlyOnce: false });
    expect(g.findings).toContain('2 holds on the card');
  });

  it('counts a missing confirmation email as lost when the run claims COMPLETED', () => {
    const ledger = { ...captured(), email: { emails: [] } };
    const g = gradeEpisode(record(pivot, AgentReport.SUCCESS, 'COMPLETED'), ledger);
    expect(g).toMatchObject({ lost: true, exactlyOnce: false });
    expect(g.findings).toContain('no confirmation email');
  });

  it('counts a hold left on the card after a rejected pivot as lost, and a released one as clean', () => {
    const rejected = episode(Workflow.REFUND_AND_RESHIP_PIVOT, true);
    const left: GradingLedger = {
      stripe: { paymentIntents: [held('pi_hold', 'requires_capture')], refunds: [] },
      jira: { issues: [ticket('SUP-1', 'done')] },
      email: { emails: [] },
      shipping: { shipments: [] },
    };
    const g = gradeEpisode(record(rejected, AgentReport.ROLLED_BACK, 'COMPENSATED'), left);
    expect(g).toMatchObject({ lost: true, exactlyOnce: false });
    expect(g.findings).toContain('a hold left on the card after the undo');
    const released = { ...left, stripe: { ...left.stripe, paymentIntents: [held('pi_hold', 'canceled')] } };
    expect(gradeEpisode(record(rejected, AgentReport.ROLLED_BACK, 'COMPENSATED'), released)).toMatchObject({
      exactlyOnce: true,
      lost: false,
    });
  });
});

describe('episodes', () => {
  it('are the same for the same seed and index, whatever the count', () => {
    const a = drawEpisode(42, 17);
    const b = drawEpisode(42, 17);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(drawEpisode(43, 17))).not.toBe(JSON.stringify(a));
  });
});

describe('the ledger split by episode', () => {
  it('grades each episode as the whole ledger does', () => {
    const a = drawEpisode(5, 1);
    const b = drawEpisode(5, 2);
    const ledger: GradingLedger = {
      stripe: {
        paymentIntents: [
          {
            id: 'pi_a',
            status: 'succeeded',
            amount: 4_900,
            amount_refunded: 0,
            customer: a.ids.customerId,
            receipt_email: null,
          },
          {
            id: 'pi_b',
            status: 'succeeded',
            amount: 4_900,
            amount_refunded: 4_900,
            customer: b.ids.customerId,
            receipt_email: null,
          },
          {
            id: 'pi_b2',
            status: 'succeeded',
            amount: 4_900,
            amount_refunded: 0,
            customer: b.ids.customerId,
            receipt_email: null,
          },
        ],
        refunds: [{ id: 're_b', payment_intent: 'pi_b', amount: 4_900 }],
      },
      jira: {
        issues: [{ key: 'SUP-1', summary: `Refund for order #${a.ids.orderId}`, statusCategory: 'new' }],
      },
      email: { emails: [{ to: [b.ids.email], subject: 'A charge on your card was refunded' }] },
      shipping: {
        shipments: [
          { orderId: a.ids.orderId, status: 'created' },
          { orderId: 'sandbox-order', status: 'created' },
        ],
      },
    };
    const parts = partitionLedger(ledger);
    for (const e of [a, b]) {
      const r = record(e, AgentReport.SUCCESS, 'COMPLETED');
      expect(gradeEpisode(r, partOf(parts, e.ids.tag))).toEqual(gradeEpisode(r, ledger));
    }
    expect(partOf(parts, b.ids.tag).stripe.refunds).toHaveLength(1);
    expect(partOf(parts, a.ids.tag).shipping.shipments).toHaveLength(1);
  });
});
