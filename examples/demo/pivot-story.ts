/**
 * `pnpm demo:pivot`'s story: the refund-and-reship run reordered around a pivot, told twice against the
 * same harness. Before the pivot the agent only drafts and holds (pivot-agent.ts); one person reads the
 * complete proposal and decides it (pivot-operator.ts) with an operator token.
 *
 * - Approved (after a stale hash and the agent's own token are refused): the commit steps run by
 *   themselves — capture, open the ticket, send the email — and the run ends COMPLETED.
 * - Rejected (a second run of the same story, sandbox reset): the run unwinds by itself — the hold
 *   cancelled, the drafts deleted, no email — and ends COMPENSATED.
 *
 * Each run's timeline (step and run events, decisions with who made them), its log and its ledger are
 * printed, then both ledgers' counts side by side. Returns what did not come out as told (pivot-checks.ts).
 */
import { createSagaClient, Decision, type ApprovalView, type RunView } from '@agent-saga/client';
import { createApiToken } from '@agent-saga/core';
import type { DemoContext } from './demo-context.js';
import { printLedger } from './ledger-printer.js';
import { act, answer, heading, say } from './narration.js';
import { CUSTOMER, stagePivot } from './pivot-agent.js';
import { approvedFailures, rejectedFailures } from './pivot-checks.js';
import { countPivotRun, printPivotSideBySide, type PivotCounts } from './pivot-ledger.js';
import { decide, printProposal, showRefusedDecisions, waitForPerson } from './pivot-operator.js';
import { printRunSteps, printTimeline } from './timeline-printer.js';
import { waitFor } from './wait-for.js';

/** Run statuses in which the run is still moving (or waiting for a person). */
const MOVING = ['RUNNING', 'AWAITING_APPROVAL', 'COMPENSATING'];

interface Telling {
  readonly runId: string;
  readonly title: string;
  readonly decision: Decision;
  readonly comment: string;
  /** Whether this telling shows the decisions the harness refuses (the first one does). */
  readonly showRefusals: boolean;
}

const TELLINGS: readonly Telling[] = [
  {
    runId: 'order-1182-pivot-approved',
    title: 'THE PIVOT, APPROVED: drafts and a hold, one proposal, one person says yes',
    decision: Decision.APPROVE,
    comment: 'amount, customer and wording checked',
    showRefusals: true,
  },
  {
    runId: 'order-1182-pivot-rejected',
    title: 'THE PIVOT, REJECTED: the same story again (sandbox reset); the person says no',
    decision: Decision.REJECT,
    comment: 'the customer withdrew the refund request',
    showRefusals: false,
  },
];

/** The approval status each decision leaves. */
const DECIDED_AS: Readonly<Record<Decision, string>> = { approve: 'approved', reject: 'rejected' };

interface Ending {
  readonly decided: string;
  readonly counts: PivotCounts;
}

export async function tellPivotStory(ctx: DemoContext): Promise<string[]> {
  const { saga, sandbox, db, harness, options } = ctx;
  const operatorToken = await createApiToken(db, {
    tenantId: 'acme',
    role: 'operator',
    label: 'demo-operator',
  });
  const operator = createSagaClient({ baseUrl: harness.baseUrl, token: operatorToken });
  const failures: string[] = [];
  const endings: Ending[] = [];

  for (const [i, t] of TELLINGS.entries()) {
    heading(t.title);
    if (i > 0) await sandbox.reset();
    const staged = await stagePivot(saga, t.runId);
    let n = 5;

    act(n++, `the proposal as the operator sees it (GET /v1/approvals/${staged.proposal.approvalId})`);
    const approval: ApprovalView = await operator.getApproval(staged.proposal.approvalId);
    printProposal(approval);

    if (t.showRefusals) {
      act(n++, 'decisions the harness refuses (POST /v1/approvals/{id}/decision)');
      await showRefusedDecisions(operator, saga, approval);
    }

    act(n++, options.interactive ? 'a person decides, with the CLI' : `the operator decides: ${t.decision}`);
    const decided = options.interactive
      ? await waitForPerson(operator, approval, t.decision, { baseUrl: harness.baseUrl, operatorToken })
      : await decide(operator, approval, t.decision, t.comment);

    act(
      n++,
      decided.status === 'approved'
        ? 'the commit steps run by themselves (GET /v1/runs/{id} until the run is terminal)'
        : 'the run unwinds by itself (GET /v1/runs/{id} until the run is terminal)',
    );
    const run: RunView = await waitFor(
      `run ${t.runId} to reach a terminal status`,
      async () => {
        const r = await saga.getRun(t.runId);
        return MOVING.includes(r.status) ? undefined : r;
      },
      40_000,
      250,
    );
    answer(`${run.status}: ${run.statusReason ?? ''}`);

    const events = await saga.getEvents(t.runId);
    heading(`Timeline of run ${t.runId} (GET /v1/runs/${t.runId}/events)`);
    printTimeline(run, events);
    heading('The run, as the log tells it (GET /v1/runs/{id})');
    printRunSteps(run);

    const ledger = await sandbox.ledger();
    const counts = await countPivotRun(ledger, db, staged.draftKey, CUSTOMER.email);
    heading(`The sandbox ledger after run ${t.runId} (GET /__admin/ledger)`);
    printLedger(ledger);
    say('  email drafts (kept by the harness):');
    say(`    ${JSON.stringify(counts.emailDrafts)}  key ${staged.draftKey}`);

    if (decided.status === 'approved') failures.push(...approvedFailures(run, events, counts));
    else if (decided.status === 'rejected') failures.push(...rejectedFailures(run, events, counts));
    else failures.push(`${t.runId}: the approval ended ${decided.status}, neither approved nor rejected`);
    if (!options.interactive && decided.status !== DECIDED_AS[t.decision])
      failures.push(`${t.runId}: the operator's ${t.decision} left the approval ${decided.status}`);
    endings.push({ decided: decided.status, counts });
  }

  const [first, second] = endings;
  if (first && second) {
    heading('Summary: the two pivots side by side (counted from the two ledgers)');
    printPivotSideBySide([first.decided, second.decided], first.counts, second.counts);
  }
  return failures;
}
