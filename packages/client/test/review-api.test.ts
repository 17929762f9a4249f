import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApprovalDecidedError,
  ApprovalExpiredError,
  ApprovalHashMismatchError,
  CaseActionRefusedError,
  ConflictError,
  createSagaClient,
  ForbiddenError,
  NotFoundError,
  PivotRequiredError,
  UnauthorizedError,
  type SagaClient,
} from '@agent-saga/client';
import { HOLD_WINDOW_MS, startRealDispatcher, type RealDispatcher } from './real-dispatcher.js';

/**
 * The run, pivot and review methods against the real dispatcher API: the wire contract as it is served,
 * not as a canned answer remembers it.
 */
let d: RealDispatcher;
let agent: SagaClient;
let operator: SagaClient;
let stranger: SagaClient;

beforeAll(async () => {
  d = await startRealDispatcher('client_review');
  agent = createSagaClient({ baseUrl: d.url, token: d.agentToken });
  operator = createSagaClient({ baseUrl: d.url, token: d.operatorToken });
  stranger = createSagaClient({ baseUrl: d.url, token: d.otherOperatorToken });
});
afterAll(async () => d?.close());

async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

/** A run with a confirmed hold (the staged part) and a pending pivot of a note and a customer notice. */
async function stagedRun(runId: string) {
  await agent.createRun({ runId });
  const hold = await agent.call(runId, 'hold_funds', { customerId: 'c-1', amount: 4200 }, { stepIdx: 0 });
  expect(hold.status).toBe('INTENDED');
  await d.confirmStep(runId, 0, 'HOLD-1');
  return agent.pivot(runId, {
    commit: [
      { tool: 'draft_note', args: { orderId: `${runId}-o1`, text: 'refund issued', apiToken: 'sk_live_x' } },
      { tool: 'notify_customer', args: { to: 'ada@example.com', text: 'your refund is on its way' } },
    ],
    summary: 'capture, note and tell the customer',
  });
}

describe('runs', () => {
  it('createRun keeps a policy; requirePivot refuses an irreversible call outside a pivot', async () => {
    await agent.createRun({ runId: 'strict', policy: { requirePivot: true } });
    expect((await agent.getRun('strict')).policy).toEqual({ requirePivot: true });
    const err = await rejectionOf(
      agent.call('strict', 'notify_customer', { to: 'bo@example.com', text: 'hi' }, { stepIdx: 0 }),
    );
    expect(err).toBeInstanceOf(PivotRequiredError);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ code: 'PIVOT_REQUIRED', status: 409, details: { tool: 'notify_customer' } });
  });

  it("listRuns filters by status and shows what waits for a person, never another tenant's", async () => {
    const p = await stagedRun('listed');
    const waiting = await operator.listRuns({ status: 'AWAITING_APPROVAL' });
    expect(waiting.find((r) => r.runId === 'listed')).toMatchObject({
      status: 'AWAITING_APPROVAL',
      steps: 3,
      pendingApprovals: 1,
      openCases: 0,
    });
    expect(waiting.every((r) => r.status === 'AWAITING_APPROVAL')).toBe(true);
    expect(await operator.listRuns({ limit: 1 })).toHaveLength(1);
    expect(await stranger.listRuns()).toEqual([]);

    const run = await agent.getRun('listed');
    expect(run).toMatchObject({ pivotIdx: 1, irreversibleBeforePivot: 0, cases: [], corrections: [] });
    expect(run.approvals).toMatchObject([{ id: p.approvalId, hash: p.hash, status: 'pending' }]);
  });
});

describe('approvals', () => {
  it('pivot → the complete proposal → approve with the hash read, once', async () => {
    const p = await stagedRun('pv-ok');
    expect(p).toMatchObject({ runId: 'pv-ok', status: 'AWAITING_APPROVAL' });
    expect(p.hash).toMatch(/^[0-9a-f]{64}$/);

    const inbox = await operator.listApprovals({ status: 'pending', runId: 'pv-ok' });
    expect(inbox.map((a) => a.id)).toEqual([p.approvalId]);
    const a = await operator.getApproval(p.approvalId);
    expect(a).toMatchObject({
      runId: 'pv-ok',
      kind: 'pivot',
      status: 'pending',
      hash: p.hash,
      expiresAt: p.expiresAt,
      summary: 'capture, note and tell the customer',
      steps: [
        { stepIdx: 1, tool: 'draft_note', toolClass: 'compensatable', audience: ['support_team'] },
        { stepIdx: 2, tool: 'notify_customer', toolClass: 'irreversible', audience: ['customer'] },
      ],
      evidence: {
        audience: ['support_team', 'customer'],
        staged: [{ stepIdx: 0, tool: 'hold_funds', externalRef: 'HOLD-1' }],
        deadline: p.expiresAt,
      },
    });
    expect(a.steps[0]!.args).toMatchObject({ orderId: 'pv-ok-o1', text: 'refund issued' });
    expect(JSON.stringify(a)).not.toContain('sk_live_x'); // secret arguments stay redacted
    expect(a.evidence.residualRisk).toContain('notify_customer');
    // The hold staged before the pivot bounds its deadline.
    const holdEnds = Date.parse(a.evidence.staged![0]!.holdEndsAt!);
    expect(holdEnds - Date.now()).toBeLessThanOrEqual(HOLD_WINDOW_MS);

    const approved = await operator.decideApproval(p.approvalId, {
      decision: 'approve',
      hash: p.hash,
      comment: 'checked',
    });
    expect(approved).toMatchObject({ status: 'approved', decidedBy: 'alice', comment: 'checked' });
    const again = await rejectionOf(
      operator.decideApproval(p.approvalId, { decision: 'approve', hash: p.hash }),
    );
    expect(again).toBeInstanceOf(ApprovalDecidedError);
    expect((again as ApprovalDecidedError).decidedStatus).toBe('approved');

    const run = await agent.getRun('pv-ok');
    expect(run.steps.map((s) => s.status)).toEqual(['CONFIRMED', 'INTENDED', 'AWAITING_APPROVAL']);
    const events = await agent.getEvents('pv-ok');
    const decisions = events.filter((e) => e.kind === 'decision' || e.kind === 'run_transition');
    expect(decisions.map((e) => [e.stepIdx, e.to, e.actor])).toContainEqual([null, 'RUNNING', 'alice']);
    expect(decisions.some((e) => e.kind === 'decision' && e.actor === 'alice')).toBe(true);
  });

  it('refuses a stale hash, an agent token and another tenant, each with its own error', async () => {
    const p = await stagedRun('pv-refused');
    const stale = await rejectionOf(
      operator.decideApproval(p.approvalId, { decision: 'approve', hash: 'f'.repeat(64) }),
    );
    expect(stale).toBeInstanceOf(ApprovalHashMismatchError);
    expect(stale).toMatchObject({ code: 'APPROVAL_HASH_MISMATCH', status: 409 });

    const byAgent = await rejectionOf(
      agent.decideApproval(p.approvalId, { decision: 'approve', hash: p.hash }),
    );
    expect(byAgent).toBeInstanceOf(ForbiddenError);
    expect(byAgent).toBeInstanceOf(UnauthorizedError); // still the 401/403 family
    expect(byAgent).toMatchObject({ code: 'FORBIDDEN', status: 403 });

    await expect(stranger.getApproval(p.approvalId)).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      stranger.decideApproval(p.approvalId, { decision: 'approve', hash: p.hash }),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect((await operator.getApproval(p.approvalId)).status).toBe('pending');
    await expect(operator.decideApproval(p.approvalId, { decision: 'approve', hash: '' })).rejects.toThrow(
      /hash is required/,
    );
  });

  it('rejected: the commit steps never run and the run unwinds; expired: 410', async () => {
    const no = await stagedRun('pv-no');
    const r = await operator.decideApproval(no.approvalId, {
      decision: 'reject',
      hash: no.hash,
      comment: 'wrong customer',
    });
    expect(r).toMatchObject({ status: 'rejected', decidedBy: 'alice' });
    const run = await agent.getRun('pv-no');
    expect(run.status).toBe('COMPENSATING');
    expect(run.steps.slice(1).map((s) => s.status)).toEqual(['REJECTED', 'REJECTED']);

    const late = await stagedRun('pv-late');
    await sql`UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = ${late.approvalId}`.execute(
      d.env.db,
    );
    const expired = await rejectionOf(
      operator.decideApproval(late.approvalId, { decision: 'approve', hash: late.hash }),
    );
    expect(expired).toBeInstanceOf(ApprovalExpiredError);
    expect(expired).toMatchObject({ code: 'APPROVAL_EXPIRED', status: 410 });
  });
});

describe('cases', () => {
  it('lists a case with its evidence and resolves it by hand, once', async () => {
    await agent.createRun({ runId: 'case-1' });
    await agent.call('case-1', 'draft_note', { orderId: 'case-1-o1', text: 'x' }, { stepIdx: 0 });
    await d.giveUp('case-1', 0, 'outcome unknown after 5 lookups', { lookups: [{ found: false }] });

    const [c] = await operator.listCases({ status: 'open', runId: 'case-1' });
    expect(c).toMatchObject({
      runId: 'case-1',
      stepIdx: 0,
      tool: 'draft_note',
      status: 'open',
      reason: 'outcome unknown after 5 lookups',
      evidence: { lookups: [{ found: false }] },
    });
    expect(await stranger.listCases({ runId: 'case-1' })).toEqual([]);
    await expect(
      agent.resolveCase(c!.id, { action: 'confirmed', externalRef: 'NOTE-9' }),
    ).rejects.toBeInstanceOf(ForbiddenError);
    const noRef = await rejectionOf(operator.resolveCase(c!.id, { action: 'confirmed' }));
    expect(noRef).toBeInstanceOf(CaseActionRefusedError);

    const done = await operator.resolveCase(c!.id, {
      action: 'confirmed',
      externalRef: 'NOTE-9',
      comment: 'found it in the tracker',
    });
    expect(done).toMatchObject({
      status: 'resolved',
      resolvedBy: 'alice',
      resolution: { action: 'confirmed' },
    });
    expect((await agent.getRun('case-1')).steps[0]).toMatchObject({
      status: 'CONFIRMED',
      externalRef: 'NOTE-9',
    });
    await expect(operator.resolveCase(c!.id, { action: 'resolve_run' })).rejects.toBeInstanceOf(
      CaseActionRefusedError,
    );
  });
});

describe('corrections', () => {
  it('customer-facing last; edit is a new hash; send binds to the hash read; dismiss once', async () => {
    await agent.createRun({ runId: 'corr' });
    await agent.call('corr', 'draft_note', { orderId: 'corr-o1', text: 'x' }, { stepIdx: 0 });
    await d.confirmStep('corr', 0, 'NOTE-1');
    await agent.call('corr', 'draft_note', { orderId: 'corr-o2', text: 'y' }, { stepIdx: 1 });
    await d.confirmStep('corr', 1, 'NOTE-2');
    const message = { template: 'email_sent_in_error', to: 'ada@example.com', vars: { order: 'o1' } };
    await d.queueCorrection('corr', 0, ['customer'], message);
    await d.queueCorrection('corr', 1, ['finance'], message);

    const items = await operator.listCorrections({ runId: 'corr', status: 'open' });
    expect(items.map((c) => [c.stepIdx, c.audience])).toEqual([
      [1, ['finance']],
      [0, ['customer']],
    ]);
    const customer = items[1]!;
    expect(customer).toMatchObject({ tool: 'draft_note', command: message, status: 'open' });

    const edited = await operator.editCorrection(customer.id, {
      hash: customer.hash,
      vars: { order: 'o1', note: 'sorry' },
    });
    expect(edited.hash).not.toBe(customer.hash);
    await expect(operator.sendCorrection(customer.id, { hash: customer.hash })).rejects.toBeInstanceOf(
      ApprovalHashMismatchError,
    );
    const sent = await operator.sendCorrection(customer.id, { hash: edited.hash, comment: 'reviewed' });
    expect(sent).toMatchObject({ status: 'sent', decidedBy: 'alice' });
    expect(sent.externalRef).toMatch(/^EM-/);

    const internal = items[0]!;
    await expect(agent.dismissCorrection(internal.id)).rejects.toBeInstanceOf(ForbiddenError);
    expect(await operator.dismissCorrection(internal.id, { comment: 'finance never saw it' })).toMatchObject({
      status: 'dismissed',
      comment: 'finance never saw it',
    });
    const twice = await rejectionOf(operator.dismissCorrection(internal.id));
    expect(twice).toBeInstanceOf(ApprovalDecidedError);
    expect((twice as ApprovalDecidedError).decidedStatus).toBe('dismissed');
    expect((await agent.getRun('corr')).corrections.map((c) => c.status).sort()).toEqual([
      'dismissed',
      'sent',
    ]);
  });
});
