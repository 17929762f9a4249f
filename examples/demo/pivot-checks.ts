/**
 * What each pivot run must come out as, checked from the sandbox's ledger, the harness's email drafts and
 * the run's log, so that `pnpm demo:pivot` doubles as a smoke test. Which list applies follows the
 * decision actually recorded (in `--interactive` a person may decide either way).
 */
import type { RunView, StepEvent } from '@agent-saga/client';
import type { PivotCounts } from './pivot-ledger.js';
import { expectEqual } from './story-checks.js';

const STAGED = ['create_email_draft', 'create_ticket_draft', 'authorize_payment'] as const;
const COMMIT = ['capture_payment', 'open_ticket', 'send_email'] as const;

/** Both endings: the decision is an event of the run with who made it; nothing waits for a person. */
function decisionFailures(f: string[], run: RunView, events: readonly StepEvent[], decided: string): void {
  const decision = events.find((e) => e.kind === 'decision' && e.stepIdx === null);
  expectEqual(
    f,
    `${run.runId}: the decision event (to, has an actor)`,
    [decision?.to, !!decision?.actor],
    [decided, true],
  );
  expectEqual(f, `${run.runId}: corrections queued for a person`, run.corrections.length, 0);
  expectEqual(f, `${run.runId}: manual-intervention cases`, run.cases.length, 0);
}

/** Approved once: the commit steps ran by themselves, each effect once, and the run COMPLETED. */
export function approvedFailures(run: RunView, events: readonly StepEvent[], c: PivotCounts): string[] {
  const f: string[] = [];
  const id = run.runId;
  expectEqual(f, `${id}: run status`, run.status, 'COMPLETED');
  expectEqual(
    f,
    `${id}: steps (tool, status)`,
    run.steps.map((s) => [s.tool, s.status]),
    [...STAGED, ...COMMIT].map((t) => [t, 'CONFIRMED']),
  );
  expectEqual(f, `${id}: captures`, c.captures, 1);
  expectEqual(f, `${id}: money taken`, c.moneyTaken, 4900);
  expectEqual(f, `${id}: card holds still open`, c.holdsOpen, 0);
  expectEqual(f, `${id}: refunds`, c.refunds, 0);
  expectEqual(f, `${id}: tickets open`, c.ticketsOpen, 1);
  expectEqual(f, `${id}: ticket drafts`, c.ticketDrafts, 0);
  expectEqual(f, `${id}: emails to the customer`, c.emailsToCustomer, 1);
  decisionFailures(f, run, events, 'approved');
  return f;
}

/** Rejected: the run unwound by itself; the hold cancelled, the drafts deleted, nothing sent. */
export function rejectedFailures(run: RunView, events: readonly StepEvent[], c: PivotCounts): string[] {
  const f: string[] = [];
  const id = run.runId;
  expectEqual(f, `${id}: run status`, run.status, 'COMPENSATED');
  expectEqual(
    f,
    `${id}: steps (tool, status)`,
    run.steps.map((s) => [s.tool, s.status]),
    [...STAGED.map((t) => [t, 'CONFIRMED']), ...COMMIT.map((t) => [t, 'REJECTED'])],
  );
  expectEqual(
    f,
    `${id}: compensation of the staged steps`,
    run.steps.filter((s) => s.status === 'CONFIRMED').map((s) => s.compensationStatus),
    STAGED.map(() => 'compensated'),
  );
  expectEqual(f, `${id}: card holds cancelled`, c.holdsCancelled, 1);
  expectEqual(f, `${id}: card holds still open`, c.holdsOpen, 0);
  expectEqual(f, `${id}: captures`, c.captures, 0);
  expectEqual(f, `${id}: money taken`, c.moneyTaken, 0);
  expectEqual(f, `${id}: tickets (drafts and open)`, c.ticketDrafts + c.ticketsOpen, 0);
  expectEqual(f, `${id}: email drafts`, c.emailDrafts, { deleted: 1 });
  expectEqual(f, `${id}: emails to the customer`, c.emailsToCustomer, 0);
  decisionFailures(f, run, events, 'rejected');
  return f;
}
