import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiToken,
  createLogger,
  createToolRegistry,
  expireDueApprovals,
  followUpRun,
  openCase,
  transitionStep,
  correctionHash,
  type AnyTool,
} from '@agent-saga/core';
import { countEffects, effectsFor } from '../../../test/fixtures/effect-tools.js';
import { eventsOf } from '../../../test/fixtures/dispatcher-processes.js';
import { executeStep as realExecuteStep } from '../src/executor/execute-step.js';
import {
  call,
  executeStep,
  newRun,
  request,
  startApiHarness,
  stepAt,
  type ApiHarness,
} from './api-harness.js';

let h: ApiHarness;
let op: string;
let opT2: string;
beforeAll(async () => {
  h = await startApiHarness('api_approvals');
  op = await createApiToken(h.env.db, { tenantId: 't1', role: 'operator', label: 'alice' });
  opT2 = await createApiToken(h.env.db, { tenantId: 't2', role: 'operator', label: 'mallory' });
});
afterAll(async () => h?.close());

const note = (orderId: string) => ({ tool: 'create_note', args: { orderId, text: 'refund requested' } });
const commit = (orderId: string) => [
  { tool: 'create_note', args: { orderId, text: 'refund issued' } },
  { tool: 'send_notice', args: { to: 'ada@example.com', text: 'your refund is on its way' } },
];

/** A run with one confirmed step (the staged part) and a pending pivot. */
async function stagedRun(runId: string) {
  await newRun(h, runId);
  await call(h, runId, note(`${runId}-o1`));
  await executeStep(h, runId, 0, { to: 'CONFIRMED' });
  const r = await request(h, 'POST', `/v1/runs/${runId}/pivot`, {
    commit: commit(`${runId}-o2`),
    summary: 'refund and tell the customer',
  });
  expect(r.status).toBe(202);
  return r.body as { approvalId: string; hash: string; expiresAt: string; status: string };
}

const decide = (id: string, body: Record<string, unknown>, token = op) =>
  request(h, 'POST', `/v1/approvals/${id}/decision`, body, token);

describe('pivot', () => {
  it('stages every commit step under one approval and holds the run', async () => {
    const p = await stagedRun('pv-stage');
    expect(p.status).toBe('AWAITING_APPROVAL');
    expect(p.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(new Date(p.expiresAt).getTime()).toBeGreaterThan(Date.now());
    expect((await stepAt(h, 'pv-stage', 1))?.status).toBe('AWAITING_APPROVAL');
    expect((await stepAt(h, 'pv-stage', 2))?.status).toBe('AWAITING_APPROVAL');
    const outbox = await h.env.db
      .selectFrom('outbox')
      .select('step_idx')
      .where('run_id', '=', 'pv-stage')
      .execute();
    expect(outbox.map((o) => o.step_idx)).toEqual([0]);

    const refused = await call(h, 'pv-stage', note('pv-stage-o3'));
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'RUN_NOT_RUNNING', runStatus: 'AWAITING_APPROVAL' });

    const inbox = await request(h, 'GET', '/v1/approvals?status=pending', undefined, op);
    const mine = (inbox.body.approvals as { id: string }[]).find((a) => a.id === p.approvalId);
    expect(mine).toMatchObject({
      runId: 'pv-stage',
      kind: 'pivot',
      status: 'pending',
      hash: p.hash,
      steps: [
        { stepIdx: 1, tool: 'create_note', status: 'AWAITING_APPROVAL' },
        { stepIdx: 2, tool: 'send_notice', args: { to: 'ada@example.com' }, audience: ['customer'] },
      ],
      evidence: {
        audience: ['support_team', 'customer'],
        staged: [{ stepIdx: 0, tool: 'create_note' }],
        deadline: p.expiresAt,
      },
    });
    expect((mine as unknown as { evidence: { residualRisk: string } }).evidence.residualRisk).toContain(
      'send_notice',
    );
  });

  it('refuses a proposal while a step is unresolved, and bad commit steps naming the field', async () => {
    await newRun(h, 'pv-open');
    await call(h, 'pv-open', note('pv-open-o1'));
    const open = await request(h, 'POST', '/v1/runs/pv-open/pivot', { commit: commit('x'), summary: 's' });
    expect(open.status).toBe(409);
    expect(open.body.error).toMatchObject({ code: 'STEP_UNRESOLVED', stepIdx: 0 });
    await executeStep(h, 'pv-open', 0, { to: 'CONFIRMED' });
    const bad = await request(h, 'POST', '/v1/runs/pv-open/pivot', {
      commit: [{ tool: 'send_notice', args: { to: 'not-an-email', text: 'x' } }],
      summary: 's',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error!.field).toMatch(/^commit\.0\.(args\.)?to$/);
    const pure = await request(h, 'POST', '/v1/runs/pv-open/pivot', {
      commit: [{ tool: 'echo', args: { text: 'x' } }],
      summary: 's',
    });
    expect(pure.status).toBe(400);
    expect(pure.body.error!.field).toBe('commit.0.tool');
    const run = await request(h, 'GET', '/v1/runs/pv-open');
    expect(run.body).toMatchObject({ status: 'RUNNING', pivotIdx: null, approvals: [] });
  });

  it('approved once: the commit steps run in order, each once, and the run completes by itself', async () => {
    const p = await stagedRun('pv-ok');
    const approved = await decide(p.approvalId, { decision: 'approve', hash: p.hash, comment: 'checked' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decidedBy: 'alice', comment: 'checked' });
    expect((await stepAt(h, 'pv-ok', 1))?.status).toBe('INTENDED');
    expect((await stepAt(h, 'pv-ok', 2))?.status).toBe('AWAITING_APPROVAL');

    const again = await decide(p.approvalId, { decision: 'approve', hash: p.hash });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'APPROVAL_DECIDED' });

    await executeStep(h, 'pv-ok', 1, { to: 'CONFIRMED' });
    expect(await followUpRun(h.env.db, 'pv-ok', h.env.schema)).toBe('released');
    expect((await stepAt(h, 'pv-ok', 2))?.status).toBe('INTENDED');
    await executeStep(h, 'pv-ok', 2, { to: 'CONFIRMED' });
    expect(await followUpRun(h.env.db, 'pv-ok', h.env.schema)).toBe('finished');

    const run = await request(h, 'GET', '/v1/runs/pv-ok');
    expect(run.body).toMatchObject({ status: 'COMPLETED', irreversibleBeforePivot: 0, pivotIdx: 1 });
    expect(await countEffects(h.raw, 'create_note')).toBeGreaterThanOrEqual(2);
    const sent = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM fixture_effects WHERE tool = 'send_notice' AND key = ${(await stepAt(h, 'pv-ok', 2))!.idempotency_key}`.execute(
      h.raw,
    );
    expect(sent.rows[0]!.n).toBe(1);

    const events = await request(h, 'GET', '/v1/runs/pv-ok/events');
    const runEvents = (events.body.events as { kind: string; to: string; actor: string | null }[]).filter(
      (e) => e.kind === 'run_transition' || e.kind === 'decision',
    );
    expect(runEvents.map((e) => [e.kind, e.to, e.actor])).toEqual([
      ['run_transition', 'RUNNING', null],
      ['run_transition', 'AWAITING_APPROVAL', expect.stringMatching(/^token:tok_[0-9a-f]+$/)],
      ['decision', 'approved', 'alice'],
      ['run_transition', 'RUNNING', 'alice'],
      ['run_transition', 'COMPLETED', null],
    ]);
  });

  it('refuses a stale hash, an agent token and another tenant, writing nothing', async () => {
    const p = await stagedRun('pv-refuse');
    const stale = await decide(p.approvalId, { decision: 'approve', hash: 'f'.repeat(64) });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'APPROVAL_HASH_MISMATCH' });
    const agent = await decide(p.approvalId, { decision: 'approve', hash: p.hash }, h.token.t1);
    expect(agent.status).toBe(403);
    expect(agent.body.error).toMatchObject({ code: 'FORBIDDEN' });
    const other = await decide(p.approvalId, { decision: 'approve', hash: p.hash }, opT2);
    expect(other.status).toBe(404);
    expect((await request(h, 'GET', `/v1/approvals/${p.approvalId}`, undefined, opT2)).status).toBe(404);
    const still = await request(h, 'GET', `/v1/approvals/${p.approvalId}`, undefined, op);
    expect(still.body).toMatchObject({ status: 'pending', decidedBy: null });
    expect((await stepAt(h, 'pv-refuse', 1))?.status).toBe('AWAITING_APPROVAL');
  });

  it('rejected: the commit steps never run and the run unwinds', async () => {
    const p = await stagedRun('pv-no');
    const r = await decide(p.approvalId, { decision: 'reject', hash: p.hash, comment: 'wrong customer' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'rejected', decidedBy: 'alice' });
    expect((await stepAt(h, 'pv-no', 1))?.status).toBe('REJECTED');
    expect((await stepAt(h, 'pv-no', 2))?.status).toBe('REJECTED');
    const run = await request(h, 'GET', '/v1/runs/pv-no');
    expect(run.body.status).toBe('COMPENSATING');
    expect(run.body.statusReason).toContain('rejected by alice: wrong customer');
  });

  it('a new pivot supersedes the pending one; deciding the old one is refused', async () => {
    const first = await stagedRun('pv-twice');
    const second = await request(h, 'POST', '/v1/runs/pv-twice/pivot', {
      commit: [{ tool: 'send_notice', args: { to: 'ada@example.com', text: 'second thoughts' } }],
      summary: 'only tell the customer',
    });
    expect(second.status).toBe(202);
    expect(second.body.hash).not.toBe(first.hash);
    const old = await request(h, 'GET', `/v1/approvals/${first.approvalId}`, undefined, op);
    expect(old.body.status).toBe('superseded');
    expect((await stepAt(h, 'pv-twice', 1))?.status).toBe('REJECTED');
    expect((await stepAt(h, 'pv-twice', 3))?.status).toBe('AWAITING_APPROVAL');
    const stale = await decide(first.approvalId, { decision: 'approve', hash: first.hash });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'APPROVAL_DECIDED', status: 'superseded' });
  });

  it('expired: a late decision is refused with 410 and the run unwinds; the sweep expires the rest', async () => {
    const p = await stagedRun('pv-late');
    await sql`UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = ${p.approvalId}`.execute(
      h.raw,
    );
    const late = await decide(p.approvalId, { decision: 'approve', hash: p.hash });
    expect(late.status).toBe(410);
    expect(late.body.error).toMatchObject({ code: 'APPROVAL_EXPIRED' });
    expect((await request(h, 'GET', '/v1/runs/pv-late')).body.status).toBe('COMPENSATING');
    expect((await stepAt(h, 'pv-late', 1))?.status).toBe('REJECTED');
    expect((await decide(p.approvalId, { decision: 'approve', hash: p.hash })).status).toBe(410);

    const q = await stagedRun('pv-sweep');
    await sql`UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = ${q.approvalId}`.execute(
      h.raw,
    );
    expect(await expireDueApprovals(h.env.db, h.env.schema)).toContain(q.approvalId);
    expect((await request(h, 'GET', '/v1/runs/pv-sweep')).body.status).toBe('COMPENSATING');
  });
});

describe('held steps outside a pivot', () => {
  it('an irreversible call waits for its own approval; approving releases it and counts it', async () => {
    await newRun(h, 'held');
    const held = await call(h, 'held', { tool: 'send_notice', args: { to: 'bo@example.com', text: 'hi' } });
    expect(held.status).toBe(202);
    expect(held.body.status).toBe('AWAITING_APPROVAL');
    const inbox = await request(h, 'GET', '/v1/approvals?runId=held', undefined, op);
    const [a] = inbox.body.approvals as { id: string; hash: string; kind: string }[];
    expect(a).toMatchObject({ kind: 'step', status: 'pending' });
    // The inbox by kind: the held step is a `step`, not a `pivot`.
    const kinds = async (kind: string) =>
      (
        (await request(h, 'GET', `/v1/approvals?runId=held&kind=${kind}`, undefined, op)).body.approvals as {
          id: string;
        }[]
      ).map((x) => x.id);
    expect(await kinds('step')).toEqual([a!.id]);
    expect(await kinds('pivot')).toEqual([]);
    expect((await request(h, 'GET', '/v1/approvals?kind=held', undefined, op)).status).toBe(400);
    const ok = await decide(a!.id, { decision: 'approve', hash: a!.hash });
    expect(ok.status).toBe(200);
    expect((await stepAt(h, 'held', 0))?.status).toBe('INTENDED');
    expect((await request(h, 'GET', '/v1/runs/held')).body.irreversibleBeforePivot).toBe(1);
  });

  it('a rejected held step answers REJECTED to the agent, and the run moves on', async () => {
    await newRun(h, 'held-no');
    await call(h, 'held-no', { tool: 'send_notice', args: { to: 'bo@example.com', text: 'hi' } });
    const [a] = (await request(h, 'GET', '/v1/approvals?runId=held-no', undefined, op)).body.approvals as {
      id: string;
      hash: string;
    }[];
    expect((await decide(a!.id, { decision: 'reject', hash: a!.hash })).status).toBe(200);
    const retry = await call(h, 'held-no', {
      tool: 'send_notice',
      args: { to: 'bo@example.com', text: 'hi' },
    });
    expect(retry.body.status).toBe('REJECTED');
    const next = await call(h, 'held-no', note('held-no-o1'));
    expect(next.body.stepIdx).toBe(1);
  });

  it('requirePivot refuses an irreversible call outside a pivot, writing nothing', async () => {
    const created = await request(h, 'POST', '/v1/runs', { runId: 'strict', policy: { requirePivot: true } });
    expect(created.status).toBe(201);
    const r = await call(h, 'strict', { tool: 'send_notice', args: { to: 'bo@example.com', text: 'hi' } });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: 'PIVOT_REQUIRED', tool: 'send_notice' });
    expect(await stepAt(h, 'strict', 0)).toBeUndefined();
    const ok = await call(h, 'strict', note('strict-o1'));
    expect(ok.body.stepIdx).toBe(0);
  });
});

describe('operator queue', () => {
  it('resolves a case by hand: confirmed with the ref, once; agents may not', async () => {
    await newRun(h, 'case-1');
    await call(h, 'case-1', note('case-1-o1'));
    await executeStep(h, 'case-1', 0, { to: 'UNKNOWN', effect: false });
    await h.env.db.transaction().execute(async (trx) => {
      await transitionStep(trx, {
        runId: 'case-1',
        stepIdx: 0,
        to: 'MANUAL_INTERVENTION',
        cause: 'test: reconciler gave up',
        schema: h.env.schema,
      });
      await openCase(trx, {
        runId: 'case-1',
        stepIdx: 0,
        tenantId: 't1',
        reason: 'outcome unknown',
        evidence: { lookups: [{ at: 'then', found: false }] },
      });
    });
    const list = await request(h, 'GET', '/v1/cases?status=open&runId=case-1', undefined, op);
    const [c] = list.body.cases as { id: string }[];
    expect(c).toMatchObject({ runId: 'case-1', stepIdx: 0, tool: 'create_note', status: 'open' });
    expect((await request(h, 'GET', '/v1/cases?runId=case-1', undefined, opT2)).body.cases).toEqual([]);
    const byAgent = await request(h, 'POST', `/v1/cases/${c!.id}/resolve`, {
      action: 'confirmed',
      externalRef: 'n-1',
    });
    expect(byAgent.status).toBe(403);
    const noRef = await request(h, 'POST', `/v1/cases/${c!.id}/resolve`, { action: 'confirmed' }, op);
    expect(noRef.status).toBe(409);
    const done = await request(
      h,
      'POST',
      `/v1/cases/${c!.id}/resolve`,
      { action: 'confirmed', externalRef: 'n-1', comment: 'found it in the tracker' },
      op,
    );
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      status: 'resolved',
      resolvedBy: 'alice',
      resolution: { action: 'confirmed' },
    });
    expect(await stepAt(h, 'case-1', 0)).toMatchObject({ status: 'CONFIRMED', external_ref: 'n-1' });
    const twice = await request(h, 'POST', `/v1/cases/${c!.id}/resolve`, { action: 'resolve_run' }, op);
    expect(twice.status).toBe(409);
  });

  it('not executed: the step is sent again with its key while the run goes forward', async () => {
    await newRun(h, 'case-2');
    await call(h, 'case-2', note('case-2-o1'));
    await executeStep(h, 'case-2', 0, { to: 'UNKNOWN', effect: false });
    await h.env.db
      .transaction()
      .execute((trx) =>
        openCase(trx, { runId: 'case-2', stepIdx: 0, tenantId: 't1', reason: 'unknown', evidence: {} }),
      );
    const [c] = (await request(h, 'GET', '/v1/cases?runId=case-2', undefined, op)).body.cases as {
      id: string;
    }[];
    const r = await request(h, 'POST', `/v1/cases/${c!.id}/resolve`, { action: 'not_executed' }, op);
    expect(r.status).toBe(200);
    expect((await stepAt(h, 'case-2', 0))?.status).toBe('INTENDED');
    const jobs = await h.env.db
      .selectFrom('outbox')
      .select('job_id')
      .where('run_id', '=', 'case-2')
      .execute();
    expect(jobs).toHaveLength(2);
  });

  it('corrections: customer-facing last; edit is a new hash; dismiss once', async () => {
    await newRun(h, 'corr');
    await call(h, 'corr', note('corr-o1'));
    await executeStep(h, 'corr', 0, { to: 'CONFIRMED' });
    await call(h, 'corr', { ...note('corr-o2'), stepIdx: 1 });
    await executeStep(h, 'corr', 1, { to: 'CONFIRMED' });
    const command = {
      template: 'email_sent_in_error',
      to: 'ada@example.com',
      vars: { originalTemplate: 'x' },
    };
    await h.env.db
      .insertInto('corrections')
      .values([
        {
          run_id: 'corr',
          step_idx: 0,
          tenant_id: 't1',
          command: JSON.stringify(command),
          audience: ['customer'],
          status: 'open',
        },
        {
          run_id: 'corr',
          step_idx: 1,
          tenant_id: 't1',
          command: JSON.stringify(command),
          audience: ['finance'],
          status: 'open',
        },
      ])
      .execute();
    const list = await request(h, 'GET', '/v1/corrections?runId=corr', undefined, op);
    const items = list.body.corrections as { id: string; stepIdx: number; hash: string }[];
    expect(items.map((c) => c.stepIdx)).toEqual([1, 0]);
    expect(items[0]!.hash).toBe(correctionHash(command));

    const customer = items[1]!;
    const staleEdit = await request(
      h,
      'POST',
      `/v1/corrections/${customer.id}/edit`,
      { hash: 'x', vars: {} },
      op,
    );
    expect(staleEdit.status).toBe(409);
    const edited = await request(
      h,
      'POST',
      `/v1/corrections/${customer.id}/edit`,
      { hash: customer.hash, vars: { originalTemplate: 'x', note: 'sorry' } },
      op,
    );
    expect(edited.status).toBe(200);
    expect(edited.body.hash).not.toBe(customer.hash);
    const staleSend = await request(
      h,
      'POST',
      `/v1/corrections/${customer.id}/send`,
      { hash: customer.hash },
      op,
    );
    expect(staleSend.status).toBe(409);
    expect(staleSend.body.error).toMatchObject({ code: 'APPROVAL_HASH_MISMATCH' });

    const agent = await request(h, 'POST', `/v1/corrections/${customer.id}/dismiss`, {});
    expect(agent.status).toBe(403);
    const dismissed = await request(
      h,
      'POST',
      `/v1/corrections/${customer.id}/dismiss`,
      { comment: 'no' },
      op,
    );
    expect(dismissed.body).toMatchObject({ status: 'dismissed', decidedBy: 'alice' });
    const again = await request(h, 'POST', `/v1/corrections/${customer.id}/dismiss`, {}, op);
    expect(again.status).toBe(409);
  });
});

describe('run list', () => {
  it("lists the tenant's runs with what waits for a person, never another tenant's", async () => {
    const r = await request(h, 'GET', '/v1/runs?status=AWAITING_APPROVAL', undefined, op);
    const ids = (r.body.runs as { runId: string; pendingApprovals: number }[]).map((x) => x.runId);
    expect(ids).toContain('pv-stage');
    expect(
      (r.body.runs as { runId: string; pendingApprovals: number }[]).find((x) => x.runId === 'pv-stage'),
    ).toMatchObject({
      pendingApprovals: 1,
      steps: 3,
    });
    const other = await request(h, 'GET', '/v1/runs', undefined, opT2);
    expect(other.body.runs).toEqual([]);
  });
});

describe('run policy unwindOnFailure', () => {
  it('a definitive failure before the pivot unwinds the run by itself, naming the step', async () => {
    const created = await request(h, 'POST', '/v1/runs', {
      runId: 'fail-fast',
      policy: { unwindOnFailure: true },
    });
    expect(created.status).toBe(201);
    await call(h, 'fail-fast', note('ff-o1'));
    await executeStep(h, 'fail-fast', 0, { to: 'CONFIRMED' });
    await call(h, 'fail-fast', { ...note('ff-o2'), stepIdx: 1 });
    expect(await followUpRun(h.env.db, 'fail-fast', h.env.schema)).toBe('none');
    await executeStep(h, 'fail-fast', 1, { to: 'FAILED' });
    expect(await followUpRun(h.env.db, 'fail-fast', h.env.schema)).toBe('unwound');
    const run = await request(h, 'GET', '/v1/runs/fail-fast');
    expect(run.body).toMatchObject({ status: 'COMPENSATING', policy: { unwindOnFailure: true } });
    expect(run.body.statusReason).toContain('step 1 (create_note) failed');
    expect(await followUpRun(h.env.db, 'fail-fast', h.env.schema)).toBe('none');
  });

  it('without the policy a failure leaves the run to its agent', async () => {
    await newRun(h, 'fail-keep');
    await call(h, 'fail-keep', note('fk-o1'));
    await executeStep(h, 'fail-keep', 0, { to: 'FAILED' });
    expect(await followUpRun(h.env.db, 'fail-keep', h.env.schema)).toBe('none');
    expect((await request(h, 'GET', '/v1/runs/fail-keep')).body.status).toBe('RUNNING');
  });
});

describe('unwind around the pivot', () => {
  it('an unwind while the pivot waits withdraws it; after approval the run refuses to unwind', async () => {
    const p = await stagedRun('pv-unwind');
    const u = await request(h, 'POST', '/v1/runs/pv-unwind/unwind', { reason: 'customer cancelled' });
    expect(u.status).toBe(202);
    const a = await request(h, 'GET', `/v1/approvals/${p.approvalId}`, undefined, op);
    expect(a.body).toMatchObject({ status: 'superseded' });
    expect((await stepAt(h, 'pv-unwind', 1))?.status).toBe('REJECTED');
    expect((await decide(p.approvalId, { decision: 'approve', hash: p.hash })).status).toBe(409);

    const q = await stagedRun('pv-forward');
    expect((await decide(q.approvalId, { decision: 'approve', hash: q.hash })).status).toBe(200);
    const refused = await request(h, 'POST', '/v1/runs/pv-forward/unwind', { reason: 'too late' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'PIVOT_STAGED' });
    const again = await request(h, 'POST', '/v1/runs/pv-forward/pivot', {
      commit: commit('x'),
      summary: 's',
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'PIVOT_STAGED' });
  });
});

describe('OpenAPI', () => {
  it('documents the pivot, approval, case and correction routes', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/docs/json' });
    const paths = Object.keys(res.json<{ paths: Record<string, unknown> }>().paths);
    for (const p of [
      '/v1/runs',
      '/v1/runs/{runId}/pivot',
      '/v1/approvals',
      '/v1/approvals/{id}',
      '/v1/approvals/{id}/decision',
      '/v1/cases',
      '/v1/cases/{id}/resolve',
      '/v1/corrections',
      '/v1/corrections/{id}/send',
      '/v1/corrections/{id}/dismiss',
    ])
      expect(paths).toContain(p);
  });
});

describe('after the pivot the run only rolls forward', () => {
  it('a commit step a person must settle stops the run; once settled, the pivot finishes with repair', async () => {
    const p = await stagedRun('pv-repair');
    expect((await decide(p.approvalId, { decision: 'approve', hash: p.hash })).status).toBe(200);
    await executeStep(h, 'pv-repair', 1, { to: 'UNKNOWN' });
    await h.env.db.transaction().execute((trx) =>
      transitionStep(trx, {
        runId: 'pv-repair',
        stepIdx: 1,
        to: 'MANUAL_INTERVENTION',
        cause: 'test: reconciler gave up',
        schema: h.env.schema,
      }),
    );
    // The follow-up (executor, reconciler or sweep) stops the run at the step a person must settle.
    expect(await followUpRun(h.env.db, 'pv-repair', h.env.schema)).toBe('stopped');
    const stopped = await request(h, 'GET', '/v1/runs/pv-repair');
    expect(stopped.body.status).toBe('MANUAL_INTERVENTION');
    const [c] = stopped.body.cases as { id: string; stepIdx: number }[];
    expect(c).toMatchObject({ stepIdx: 1 });
    const fixed = await request(
      h,
      'POST',
      `/v1/cases/${c!.id}/resolve`,
      { action: 'confirmed', externalRef: 'note-by-hand' },
      op,
    );
    expect(fixed.status).toBe(200);
    expect((await stepAt(h, 'pv-repair', 2))?.status).toBe('INTENDED');
    await executeStep(h, 'pv-repair', 2, { to: 'CONFIRMED' });
    expect(await followUpRun(h.env.db, 'pv-repair', h.env.schema)).toBe('finished');
    const run = await request(h, 'GET', '/v1/runs/pv-repair');
    expect(run.body.status).toBe('COMMITTED_WITH_REPAIR');
    expect(run.body.statusReason).toContain('step 1 needed repair');
  });
});

/** The real executor's `executeStep`, in process, on one step's first job, with `tools` as its registry. */
async function runExecutor(runId: string, stepIdx: number, tools: readonly AnyTool[] = h.tools) {
  const step = await stepAt(h, runId, stepIdx);
  if (!step) throw new Error(`no step ${stepIdx} in ${runId}`);
  return realExecuteStep(
    {
      db: h.env.db,
      registry: createToolRegistry(tools),
      config: { SAGA_DB_SCHEMA: h.env.schema, LEASE_MARGIN_MS: 1_000 },
      workerId: 'approvals-test-executor',
      crash: () => undefined,
      logger: createLogger({ level: 'silent', name: 'approvals-test-executor' }),
      shutdownSignal: new AbortController().signal,
    },
    { runId, stepIdx, key: step.idempotency_key, dispatchNo: 1 },
    step.idempotency_key,
  );
}

const eventsOfStep = (runId: string, stepIdx: number) => eventsOf(h.env.db, runId, stepIdx);

describe('nothing irreversible after an unwind', () => {
  it('an unwind withdraws a held send; a late approve with the right hash is refused 409 RUN_NOT_RUNNING and nothing is sent', async () => {
    await newRun(h, 'held-unwind');
    const notice = { tool: 'send_notice', args: { to: 'cy@example.com', text: 'your refund is on its way' } };
    const held = await call(h, 'held-unwind', notice);
    expect(held.body.status).toBe('AWAITING_APPROVAL');

    // Before the unwind the approval is really pending and decidable: listed in the inbox with its hash, and
    // a decision reaches the hash check (a wrong hash is refused as a mismatch, not for the run's status).
    const inbox = await request(h, 'GET', '/v1/approvals?status=pending&runId=held-unwind', undefined, op);
    const [a] = inbox.body.approvals as { id: string; hash: string }[];
    expect(a).toMatchObject({
      kind: 'step',
      status: 'pending',
      steps: [{ stepIdx: 0, tool: 'send_notice', status: 'AWAITING_APPROVAL' }],
    });
    expect(a!.hash).toMatch(/^[0-9a-f]{64}$/);
    const wrong = await decide(a!.id, { decision: 'approve', hash: 'f'.repeat(64) });
    expect(wrong.status).toBe(409);
    expect(wrong.body.error).toMatchObject({ code: 'APPROVAL_HASH_MISMATCH' });

    const u = await request(h, 'POST', '/v1/runs/held-unwind/unwind', { reason: 'customer cancelled' });
    expect(u.status).toBe(202);

    // The approval is closed, with the reason; the held step is withdrawn, with the reason in its events.
    const after = await request(h, 'GET', '/v1/approvals?status=pending&runId=held-unwind', undefined, op);
    expect(after.body.approvals).toEqual([]);
    const closed = await request(h, 'GET', `/v1/approvals/${a!.id}`, undefined, op);
    expect(closed.body).toMatchObject({ status: 'superseded', hash: a!.hash });
    expect(closed.body.comment).toContain('withdrawn: run unwound');
    expect(closed.body.comment).toContain('customer cancelled');
    expect((await stepAt(h, 'held-unwind', 0))?.status).toBe('REJECTED');
    const withdrawn = (await eventsOfStep('held-unwind', 0)).find((e) => e.to_status === 'REJECTED');
    expect(withdrawn).toMatchObject({ kind: 'transition', from_status: 'AWAITING_APPROVAL' });
    expect(withdrawn?.cause).toContain('withdrawn: run unwound');

    // The late approval, with the right hash, is refused and writes nothing.
    const late = await decide(a!.id, { decision: 'approve', hash: a!.hash });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'RUN_NOT_RUNNING', runStatus: 'COMPENSATING' });
    expect((await request(h, 'GET', `/v1/approvals/${a!.id}`, undefined, op)).body).toMatchObject({
      status: 'superseded',
      decidedBy: null,
    });
    const rejectLate = await decide(a!.id, { decision: 'reject', hash: a!.hash });
    expect(rejectLate.body.error).toMatchObject({ code: 'RUN_NOT_RUNNING' });

    // Never sent: no dispatch was ever written for it, an executor handed its key sends nothing, no effect.
    const step = (await stepAt(h, 'held-unwind', 0))!;
    expect(
      await h.env.db.selectFrom('outbox').select('id').where('run_id', '=', 'held-unwind').execute(),
    ).toEqual([]);
    expect(await runExecutor('held-unwind', 0)).toMatchObject({ kind: 'duplicate', status: 'REJECTED' });
    expect(await effectsFor(h.raw, step.idempotency_key)).toHaveLength(0);
    expect((await request(h, 'GET', '/v1/runs/held-unwind')).body.status).toBe('COMPENSATING');
  });

  it('an unwind also withdraws an intent no executor has claimed: NOT_EXECUTED, and its job sends nothing', async () => {
    await newRun(h, 'queued-unwind');
    await call(h, 'queued-unwind', note('qu-o1'));
    expect((await stepAt(h, 'queued-unwind', 0))?.status).toBe('INTENDED');
    expect((await request(h, 'POST', '/v1/runs/queued-unwind/unwind', { reason: 'stop' })).status).toBe(202);
    const step = (await stepAt(h, 'queued-unwind', 0))!;
    expect(step.status).toBe('NOT_EXECUTED');
    const events = await eventsOfStep('queued-unwind', 0);
    expect(events.at(-1)?.cause).toContain('withdrawn: run unwound');
    expect(await runExecutor('queued-unwind', 0)).toMatchObject({
      kind: 'duplicate',
      status: 'NOT_EXECUTED',
    });
    expect(await effectsFor(h.raw, step.idempotency_key)).toHaveLength(0);
  });

  it('the run policy unwindOnFailure withdraws a held step too (every path to COMPENSATING)', async () => {
    const created = await request(h, 'POST', '/v1/runs', {
      runId: 'fail-held',
      policy: { unwindOnFailure: true },
    });
    expect(created.status).toBe(201);
    await call(h, 'fail-held', note('fh-o1'));
    await executeStep(h, 'fail-held', 0, { to: 'FAILED' });
    const held = await call(h, 'fail-held', {
      tool: 'send_notice',
      args: { to: 'cy@example.com', text: 'hi' },
      stepIdx: 1,
    });
    expect(held.body.status).toBe('AWAITING_APPROVAL');
    const [a] = (await request(h, 'GET', '/v1/approvals?runId=fail-held', undefined, op)).body.approvals as {
      id: string;
      hash: string;
      status: string;
    }[];
    expect(a?.status).toBe('pending');
    expect(await followUpRun(h.env.db, 'fail-held', h.env.schema)).toBe('unwound');
    expect((await request(h, 'GET', `/v1/approvals/${a!.id}`, undefined, op)).body.status).toBe('superseded');
    expect((await stepAt(h, 'fail-held', 1))?.status).toBe('REJECTED');
    const late = await decide(a!.id, { decision: 'approve', hash: a!.hash });
    expect(late.body.error).toMatchObject({ code: 'RUN_NOT_RUNNING' });
  });
});

describe('commit steps only within their approval', () => {
  it('past the approval deadline nothing more is released: the run stops with a case naming it', async () => {
    const p = await stagedRun('pv-deadline');
    expect((await decide(p.approvalId, { decision: 'approve', hash: p.hash })).status).toBe(200);
    expect((await stepAt(h, 'pv-deadline', 1))?.status).toBe('INTENDED');
    await sql`UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = ${p.approvalId}`.execute(
      h.raw,
    );
    await executeStep(h, 'pv-deadline', 1, { to: 'CONFIRMED' });
    expect(await followUpRun(h.env.db, 'pv-deadline', h.env.schema)).toBe('stopped');

    const run = await request(h, 'GET', '/v1/runs/pv-deadline');
    expect(run.body.status).toBe('MANUAL_INTERVENTION');
    expect(run.body.statusReason).toContain("the approval's deadline");
    const [c] = run.body.cases as { id: string; stepIdx: number; evidence: Record<string, unknown> }[];
    expect(c).toMatchObject({
      stepIdx: 2,
      evidence: {
        approvalId: p.approvalId,
        deadlinePassed: true,
        unreleased: [{ stepIdx: 2, tool: 'send_notice' }],
      },
    });
    const last = (await stepAt(h, 'pv-deadline', 2))!;
    expect(last.status).toBe('REJECTED');
    const outbox = await h.env.db
      .selectFrom('outbox')
      .select('step_idx')
      .where('run_id', '=', 'pv-deadline')
      .execute();
    expect(outbox.map((o) => o.step_idx)).toEqual([0, 1]);
    expect(await effectsFor(h.raw, last.idempotency_key)).toHaveLength(0);
  });

  it("past a staged hold's window nothing more is released either", async () => {
    const p = await stagedRun('pv-hold');
    expect((await decide(p.approvalId, { decision: 'approve', hash: p.hash })).status).toBe(200);
    // The hold staged before the pivot (step 0) ended, as its evidence recorded it; the deadline still holds.
    await sql`
      UPDATE approvals
         SET evidence = jsonb_set(evidence, '{staged,0,holdEndsAt}', to_jsonb((now() - interval '1 second')::text))
       WHERE id = ${p.approvalId}`.execute(h.raw);
    await executeStep(h, 'pv-hold', 1, { to: 'CONFIRMED' });
    expect(await followUpRun(h.env.db, 'pv-hold', h.env.schema)).toBe('stopped');
    const run = await request(h, 'GET', '/v1/runs/pv-hold');
    expect(run.body.status).toBe('MANUAL_INTERVENTION');
    const [c] = run.body.cases as { reason: string; evidence: Record<string, unknown> }[];
    expect(c!.reason).toContain('the hold of step 0 (create_note) ended');
    expect(c!.evidence).toMatchObject({
      deadlinePassed: false,
      lapsedHolds: [{ stepIdx: 0, tool: 'create_note' }],
    });
    expect((await stepAt(h, 'pv-hold', 2))?.status).toBe('REJECTED');
  });

  it('only the approved tool version runs: after a version bump the commit step is not sent, and a case says why', async () => {
    // The same executor and registry send an approved commit step...
    const ok = await stagedRun('pv-version-ok');
    expect((await decide(ok.approvalId, { decision: 'approve', hash: ok.hash })).status).toBe(200);
    expect(await runExecutor('pv-version-ok', 1)).toMatchObject({ kind: 'executed', outcome: 'CONFIRMED' });
    expect(await effectsFor(h.raw, (await stepAt(h, 'pv-version-ok', 1))!.idempotency_key)).toHaveLength(1);

    // ...but not once create_note's registered version is no longer the one the approval bound.
    const p = await stagedRun('pv-version');
    expect((await decide(p.approvalId, { decision: 'approve', hash: p.hash })).status).toBe(200);
    const bumped = h.tools.map((t) => (t.name === 'create_note' ? { ...t, version: t.version + 1 } : t));
    expect(await runExecutor('pv-version', 1, bumped)).toMatchObject({ kind: 'executed', outcome: 'FAILED' });
    const step = (await stepAt(h, 'pv-version', 1))!;
    expect(step).toMatchObject({
      status: 'FAILED',
      tool_version: 1,
      error: { code: 'APPROVED_VERSION_CHANGED' },
    });
    expect(await effectsFor(h.raw, step.idempotency_key)).toHaveLength(0);
    // The executor's follow-up stopped the run (after the pivot it only rolls forward): a case, nothing more sent.
    const run = await request(h, 'GET', '/v1/runs/pv-version');
    expect(run.body.status).toBe('MANUAL_INTERVENTION');
    const [c] = run.body.cases as {
      stepIdx: number;
      evidence: { error: { code: string; message: string } };
    }[];
    expect(c).toMatchObject({ stepIdx: 1, evidence: { error: { code: 'APPROVED_VERSION_CHANGED' } } });
    expect(c!.evidence.error.message).toContain('version 1');
    expect((await stepAt(h, 'pv-version', 2))?.status).toBe('AWAITING_APPROVAL');
  });
});
