/**
 * Approvals in recovery (issue 12), with every role a real process against the vendor sandbox: a
 * compensation that moves money above the run policy's `approveMoneyAbove` or deletes under
 * `approveDeletions` waits for an operator while the rest of the unwind goes on; a run whose authority
 * lapsed (`authorityTtlMs`) sends nothing of its recovery before a renewal is approved; a run past its
 * deadline stops by itself. Each test reads what a user would check: the sandbox's ledger (refunds,
 * tickets, shipments), the run as `GET /v1/runs/{id}` shows it, the approvals and cases of the run.
 *
 * The policy, the authority's grant time and the deadline are written where the API stores them
 * (`runs.policy`, `runs.authority_at`, `runs.deadline_at`) after the forward steps confirmed: that the API
 * accepts and stores them at creation, and holds a forward charge above the limit, is the intake's slice
 * (tested with it); here the forward steps go through unheld, and only recovery is under test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createApiToken } from '@agent-saga/core';
import { CHARGE_AMOUNT, effectSteps, runLedger, type FlowStep } from './fixtures/support-flow.js';
import { startSupportHarness, type SupportHarness } from './fixtures/support-harness.js';
import { waitFor } from './fixtures/dispatcher-processes.js';

let h: SupportHarness;
let operator: string;
beforeAll(async () => {
  h = await startSupportHarness('recovery_approvals', ['relay', 'executor', 'reconciler', 'compensator']);
  operator = await createApiToken(h.env.db, { tenantId: 'acme', role: 'operator', label: 'olga' });
}, 90_000);
afterAll(async () => h?.close());

const [TICKET, CHARGE, RESHIP] = effectSteps('1183') as [FlowStep, FlowStep, FlowStep];

type Json = Record<string, unknown>;
async function api(method: string, path: string, body?: unknown, token = h.token) {
  const res = await fetch(`${h.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

/** One forward step, called until it is CONFIRMED (the model's patience), with its dependencies. */
async function confirm(runId: string, stepIdx: number, step: FlowStep, dependsOn?: number[]) {
  await waitFor(
    `step ${stepIdx} of ${runId} CONFIRMED`,
    async () => {
      const r = await api('POST', `/v1/runs/${runId}/calls`, {
        tool: step.tool,
        args: step.args,
        stepIdx,
        waitMs: 3_000,
        ...(dependsOn ? { dependsOn } : {}),
      });
      if (r.body.status === 'FAILED' || r.body.status === 'MANUAL_INTERVENTION')
        throw new Error(`step ${stepIdx} of ${runId}: ${JSON.stringify(r.body)}`);
      return r.body.status === 'CONFIRMED' ? r.body : undefined;
    },
    20_000,
    100,
  );
}

/**
 * A run with a ticket, a charge and a reship, all CONFIRMED. The ticket depends on nothing and the charge
 * on nothing, the reship on the charge: so the reship is undone before the refund (reverse dependency
 * order), and the ticket's close does not wait for the refund.
 */
async function supportRun(runId: string, policy: Json): Promise<void> {
  expect((await api('POST', '/v1/runs', { runId })).status).toBe(201);
  await confirm(runId, 0, TICKET, []);
  await confirm(runId, 1, CHARGE, []);
  await confirm(runId, 2, RESHIP, [1]);
  await setPolicy(runId, policy);
}

async function setPolicy(runId: string, policy: Json): Promise<void> {
  await h.env.db
    .updateTable('runs')
    .set({ policy: sql`policy || ${JSON.stringify(policy)}::jsonb` as never })
    .where('run_id', '=', runId)
    .execute();
}

const unwind = (runId: string) => api('POST', `/v1/runs/${runId}/unwind`, { reason: `test ${runId}` });
const getRun = async (runId: string) => (await api('GET', `/v1/runs/${runId}`)).body;
const ledgerOf = async (runId: string) => runLedger(h.sandbox.admin.ledger(), await h.saga.getRun(runId));

/** The run's approvals of `kind` as the operator's inbox lists them. */
async function approvalsOf(runId: string, kind: string, status = 'pending'): Promise<Json[]> {
  const r = await api('GET', `/v1/approvals?status=${status}&runId=${runId}`, undefined, operator);
  expect(r.status).toBe(200);
  return (r.body.approvals as Json[]).filter((a) => a.kind === kind);
}

const onePending = (runId: string, kind: string) =>
  waitFor(
    `a pending ${kind} approval of ${runId}`,
    async () => (await approvalsOf(runId, kind))[0],
    20_000,
    100,
  );

const decide = (a: Json, decision: 'approve' | 'reject', comment?: string) =>
  api('POST', `/v1/approvals/${String(a.id)}/decision`, { decision, hash: a.hash, comment }, operator);

const casesOf = async (runId: string) =>
  (await api('GET', `/v1/cases?runId=${runId}`, undefined, operator)).body.cases as Json[];

/** The compensation statuses of the run's steps, as the run view shows them. */
const compStatuses = async (runId: string) =>
  ((await getRun(runId)).steps as Json[]).map((s) => s.compensationStatus);

describe('a compensation that moves money above approveMoneyAbove', () => {
  it('waits for the operator while the other compensations go on, and is sent once after approval', async () => {
    const runId = 'ra-money-approved';
    await supportRun(runId, { approveMoneyAbove: { EUR: CHARGE_AMOUNT - 1 } });
    expect((await unwind(runId)).status).toBe(202);

    const approval = await onePending(runId, 'compensation');
    // The rest of the unwind went on: the shipment cancelled, the ticket closed; no refund.
    await waitFor('the other compensations done', async () => {
      const c = await compStatuses(runId);
      return c[0] === 'compensated' && c[2] === 'compensated' ? c : undefined;
    });
    expect(await compStatuses(runId)).toEqual(['compensated', 'awaiting_approval', 'compensated']);
    let ledger = await ledgerOf(runId);
    expect(ledger.charges).toEqual([expect.objectContaining({ refunds: 0, amountRefunded: 0 })]);
    expect(ledger.shipments.map((s) => s.status)).toEqual(['canceled']);
    expect(ledger.tickets.map((t) => t.status)).toEqual(['Done']);
    expect((await getRun(runId)).status).toBe('COMPENSATING');

    // What the operator reads.
    const paymentIntent = ledger.charges[0]!.id;
    expect(approval).toMatchObject({
      kind: 'compensation',
      status: 'pending',
      steps: [expect.objectContaining({ stepIdx: 1, tool: 'charge_card' })],
    });
    expect(approval.evidence).toMatchObject({
      action: { tool: 'refund', args: { payment: paymentIntent } },
      money: { currency: 'eur', amount: CHARGE_AMOUNT, limit: CHARGE_AMOUNT - 1 },
      resource: { externalRef: paymentIntent },
      forwardReceipt: { stepIdx: 1, tool: 'charge_card', externalRef: paymentIntent },
      reason: `test ${runId}`,
      expectedResult: expect.stringContaining(String(CHARGE_AMOUNT)) as unknown,
      residualRisk: expect.any(String) as unknown,
      deadline: approval.expiresAt,
      alternatives: [
        expect.stringMatching(/^approve/),
        expect.stringMatching(/^reject/),
        expect.stringMatching(/^resolve by hand/),
      ],
    });

    // A stale hash is refused and sends nothing.
    const stale = await decide({ ...approval, hash: 'f'.repeat(64) }, 'approve');
    expect(stale.body.error).toMatchObject({ code: 'APPROVAL_HASH_MISMATCH' });
    expect((await decide(approval, 'approve')).status).toBe(200);

    const run = await h.terminal(runId);
    expect(run.status).toBe('COMPENSATED');
    ledger = await ledgerOf(runId);
    expect(ledger.charges).toEqual([expect.objectContaining({ refunds: 1, amountRefunded: CHARGE_AMOUNT })]);
    const comp = await h.env.db
      .selectFrom('compensations')
      .select(['attempts', 'status', 'approval_id'])
      .where('run_id', '=', runId)
      .where('step_idx', '=', 1)
      .executeTakeFirstOrThrow();
    expect(comp).toEqual({ attempts: 1, status: 'compensated', approval_id: approval.id });
  });

  it('rejected: the refund is never sent, a case opens, the run ends MANUAL_INTERVENTION', async () => {
    const runId = 'ra-money-rejected';
    await supportRun(runId, { approveMoneyAbove: { eur: 100 } });
    expect((await unwind(runId)).status).toBe(202);
    const approval = await onePending(runId, 'compensation');
    expect((await decide(approval, 'reject', 'refund by hand after a call')).status).toBe(200);

    const run = await h.terminal(runId);
    expect(run.status).toBe('MANUAL_INTERVENTION');
    expect(run.statusReason).toContain('rejected by olga');
    const ledger = await ledgerOf(runId);
    expect(ledger.charges).toEqual([expect.objectContaining({ refunds: 0, amountRefunded: 0 })]);
    // The others were undone all the same.
    expect(ledger.shipments.map((s) => s.status)).toEqual(['canceled']);
    expect(ledger.tickets.map((t) => t.status)).toEqual(['Done']);
    expect(run.steps.map((s) => s.compensationStatus)).toEqual(['compensated', 'failed', 'compensated']);
    const cases = await casesOf(runId);
    expect(cases).toEqual([
      expect.objectContaining({
        stepIdx: 1,
        status: 'open',
        reason: expect.stringContaining('rejected') as unknown,
      }),
    ]);
    const sent = await h.env.db
      .selectFrom('compensations')
      .select('attempts')
      .where('run_id', '=', runId)
      .where('step_idx', '=', 1)
      .executeTakeFirstOrThrow();
    expect(sent.attempts).toBe(0);
  });
});

describe('approveDeletions', () => {
  it('holds the delete_ticket compensation of a ticket draft until the operator approves it', async () => {
    const runId = 'ra-deletion';
    expect((await api('POST', '/v1/runs', { runId })).status).toBe(201);
    await confirm(runId, 0, {
      tool: 'create_ticket_draft',
      args: { summary: 'Refund for order #1183', orderId: '1183' },
    });
    await setPolicy(runId, { approveDeletions: true });
    const ticket = ((await getRun(runId)).steps as Json[])[0]!.externalRef as string;
    const issue = () => h.sandbox.admin.ledger().jira.issues.find((i) => i.key === ticket);
    expect((await unwind(runId)).status).toBe(202);

    const approval = await onePending(runId, 'compensation');
    expect(approval.evidence).toMatchObject({
      why: 'run policy approveDeletions',
      action: { tool: 'delete_ticket', args: { ticket } },
      resource: { externalRef: ticket },
    });
    expect(await compStatuses(runId)).toEqual(['awaiting_approval']);
    expect(issue()).toBeDefined();
    expect((await decide(approval, 'approve')).status).toBe(200);
    expect((await h.terminal(runId)).status).toBe('COMPENSATED');
    expect(issue()).toBeUndefined();
  });
});

describe('an authority that lapsed during the unwind', () => {
  /** A run whose authority was granted two minutes ago, for one minute: lapsed. */
  async function lapsedRun(runId: string): Promise<void> {
    await supportRun(runId, { authorityTtlMs: 60_000 });
    await h.env.db
      .updateTable('runs')
      .set({ authority_at: sql<Date>`now() - interval '2 minutes'` })
      .where('run_id', '=', runId)
      .execute();
  }

  it('holds the whole recovery, the refund included, until a renewal is approved', async () => {
    const runId = 'ra-renewal-approved';
    await lapsedRun(runId);
    const since = new Date().toISOString();
    expect((await unwind(runId)).status).toBe(202);
    const renewal = await onePending(runId, 'renewal');
    // The plan, in the order it would be sent: the reship's cancel, the refund, the ticket's close.
    const plan = (renewal.evidence as Json).recoveryPlan as Json[];
    expect(plan.map((a) => [a.action, a.stepIdx, a.tool])).toEqual([
      ['compensate', 2, 'cancel_shipment'],
      ['compensate', 1, 'refund'],
      ['compensate', 0, 'close_ticket'],
    ]);
    expect((renewal.evidence as Json).planHash).toBe(renewal.hash);
    // Nothing was sent meanwhile: no write reached any vendor, and the compensator has passed over the run.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(h.sandbox.admin.requests().filter((q) => q.at >= since && q.method !== 'GET')).toEqual([]);
    expect(await compStatuses(runId)).toEqual(['pending', 'pending', 'pending']);
    expect(await approvalsOf(runId, 'renewal')).toHaveLength(1); // one pending renewal per run

    expect((await decide(renewal, 'approve')).status).toBe(200);
    const run = await h.terminal(runId);
    expect(run.status).toBe('COMPENSATED');
    const ledger = await ledgerOf(runId);
    expect(ledger.charges).toEqual([expect.objectContaining({ refunds: 1, amountRefunded: CHARGE_AMOUNT })]);
    expect(ledger.shipments.map((s) => s.status)).toEqual(['canceled']);
    const authority = await h.env.db
      .selectFrom('runs')
      .select(['authority_at'])
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(authority.authority_at.getTime()).toBeGreaterThan(Date.parse(since) - 5_000);
  });

  it('rejected: nothing is sent, the run ends MANUAL_INTERVENTION with a case', async () => {
    const runId = 'ra-renewal-rejected';
    await lapsedRun(runId);
    const since = new Date().toISOString();
    expect((await unwind(runId)).status).toBe(202);
    const renewal = await onePending(runId, 'renewal');
    expect((await decide(renewal, 'reject', 'the customer called back')).status).toBe(200);
    const run = await h.terminal(runId);
    expect(run.status).toBe('MANUAL_INTERVENTION');
    expect(run.statusReason).toContain(`renewal ${String(renewal.id)}`);
    expect(await casesOf(runId)).toEqual([
      expect.objectContaining({
        stepIdx: null,
        status: 'open',
        reason: expect.stringContaining('rejected by olga') as unknown,
      }),
    ]);
    expect(h.sandbox.admin.requests().filter((q) => q.at >= since && q.method !== 'GET')).toEqual([]);
    const ledger = await ledgerOf(runId);
    expect(ledger.charges).toEqual([expect.objectContaining({ refunds: 0 })]);
  });
});

describe('a run past its deadline', () => {
  async function overdue(runId: string, policy: Json): Promise<void> {
    expect((await api('POST', '/v1/runs', { runId })).status).toBe(201);
    await confirm(runId, 0, TICKET);
    await setPolicy(runId, policy);
    await h.env.db
      .updateTable('runs')
      .set({ deadline_at: sql<Date>`now() - interval '1 second'` })
      .where('run_id', '=', runId)
      .execute();
  }

  it('unwinds by itself when its policy says unwindOnFailure', async () => {
    const runId = 'ra-deadline-unwind';
    await overdue(runId, { unwindOnFailure: true });
    const run = await h.terminal(runId);
    expect(run.status).toBe('COMPENSATED');
    expect(run.statusReason).toContain('deadline passed');
    expect((await ledgerOf(runId)).tickets.map((t) => t.status)).toEqual(['Done']);
  });

  it('else goes to MANUAL_INTERVENTION with a case, and refuses new calls', async () => {
    const runId = 'ra-deadline-person';
    await overdue(runId, {});
    const run = await h.terminal(runId);
    expect(run.status).toBe('MANUAL_INTERVENTION');
    expect(run.statusReason).toContain('deadline');
    expect(await casesOf(runId)).toEqual([
      expect.objectContaining({
        stepIdx: null,
        status: 'open',
        reason: expect.stringContaining('deadline') as unknown,
      }),
    ]);
    // The ticket is left as it was: nobody undid it.
    expect((await ledgerOf(runId)).tickets.map((t) => t.status)).toEqual(['To Do']);
    const refused = await api('POST', `/v1/runs/${runId}/calls`, {
      tool: CHARGE.tool,
      args: CHARGE.args,
      stepIdx: 1,
    });
    expect(refused.status).toBe(409);
  });
});
