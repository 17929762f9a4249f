/**
 * Least privilege (issue 14): an `own-runs` agent token sees and acts on the runs it created, and nothing
 * else of its tenant: every run route answers another token's run exactly as an absent one (404
 * NOT_FOUND), writing nothing; the run list shows its own runs only. A tenant-scope token sees them all.
 * And every decision names its token: an approval decided, a case resolved and a pivot superseded carry the
 * deciding token's id beside its label, in the rows and in the views.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRun,
  issueApiToken,
  openCase,
  TokenRole,
  TokenScope,
  type IssuedApiToken,
} from '@agent-saga/core';
import {
  call,
  countRows,
  executeStep,
  request,
  startApiHarness,
  stepAt,
  type ApiHarness,
} from './api-harness.js';

let h: ApiHarness;
/** Agent tokens of tenant t1: `a` scoped own-runs, `b` tenant-wide; `op` an operator of t1. */
let a: IssuedApiToken;
let b: IssuedApiToken;
let op: IssuedApiToken;
beforeAll(async () => {
  h = await startApiHarness('api_token_scope');
  const t1 = { tenantId: 't1' } as const;
  a = await issueApiToken(h.env.db, {
    ...t1,
    role: TokenRole.AGENT,
    scope: TokenScope.OWN_RUNS,
    label: 'bot-a',
  });
  b = await issueApiToken(h.env.db, { ...t1, role: TokenRole.AGENT, label: 'bot-b' });
  op = await issueApiToken(h.env.db, { ...t1, role: TokenRole.OPERATOR, label: 'alice' });
});
afterAll(async () => h?.close());

const note = (orderId: string) => ({ tool: 'create_note', args: { orderId, text: 'refund requested' } });
const commit = (orderId: string) => [{ tool: 'create_note', args: { orderId, text: 'refund issued' } }];

async function created(runId: string, token: string): Promise<void> {
  const r = await request(h, 'POST', '/v1/runs', { runId }, token);
  expect(r.status).toBe(201);
}

/** Every run route, as `token` would call it on `runId`. */
const runRoutes = (runId: string) =>
  [
    ['GET', `/v1/runs/${runId}`, undefined],
    ['GET', `/v1/runs/${runId}?stepsAfter=0&stepsLimit=1`, undefined],
    ['GET', `/v1/runs/${runId}/events`, undefined],
    ['POST', `/v1/runs/${runId}/calls`, { ...note(`${runId}-probe`), stepIdx: 1 }],
    ['POST', `/v1/runs/${runId}/calls`, { tool: 'echo', args: { text: 'hi' } }],
    ['POST', `/v1/runs/${runId}/unwind`, { reason: 'probe' }],
    ['POST', `/v1/runs/${runId}/complete`, undefined],
    ['POST', `/v1/runs/${runId}/pivot`, { commit: commit(`${runId}-c`), summary: 'probe' }],
  ] as const;

/** What the database holds for a run: its row's status and its counts of steps, outbox rows, events. */
async function footprint(runId: string) {
  const run = await h.env.db
    .selectFrom('runs')
    .select(['status', 'pivot_idx'])
    .where('run_id', '=', runId)
    .executeTakeFirst();
  const events = await h.env.db
    .selectFrom('step_events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('run_id', '=', runId)
    .executeTakeFirstOrThrow();
  const approvals = await h.env.db
    .selectFrom('approvals')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('run_id', '=', runId)
    .executeTakeFirstOrThrow();
  return {
    run,
    steps: await countRows(h, 'saga_log', runId),
    outbox: await countRows(h, 'outbox', runId),
    events: Number(events.n),
    approvals: Number(approvals.n),
  };
}

describe('an own-runs token', () => {
  it("answers another token's run on every run route exactly as an absent run, writing nothing", async () => {
    await created('scope-a', a.token);
    await created('scope-b', b.token);
    const creators = await h.env.db
      .selectFrom('runs')
      .select(['run_id', 'created_by_token'])
      .where('run_id', 'in', ['scope-a', 'scope-b'])
      .orderBy('run_id')
      .execute();
    expect(creators).toEqual([
      { run_id: 'scope-a', created_by_token: a.id },
      { run_id: 'scope-b', created_by_token: b.id },
    ]);
    // B's run has a step, so a read would have something to show and a call something to add to.
    expect((await call(h, 'scope-b', note('scope-b-o1'), b.token)).status).toBe(202);
    const before = await footprint('scope-b');
    expect(before.steps).toBe(1);

    const absent = runRoutes('scope-none');
    const others = runRoutes('scope-b');
    for (const [i, [method, url, body]] of others.entries()) {
      const got = await request(h, method, url, body, a.token);
      const [, absentUrl, absentBody] = absent[i]!;
      const none = await request(h, method, absentUrl, absentBody, a.token);
      expect({ url, status: got.status, code: got.body.error?.code }).toEqual({
        url,
        status: 404,
        code: 'NOT_FOUND',
      });
      // Same answer as for a run that does not exist, down to the message (the id aside).
      expect({ url, body: JSON.stringify(got.body).replaceAll('scope-b', 'ID') }).toEqual({
        url,
        body: JSON.stringify(none.body).replaceAll('scope-none', 'ID'),
      });
    }
    expect(await footprint('scope-b')).toEqual(before);
    expect(await stepAt(h, 'scope-b', 1)).toBeUndefined();

    // Naming B's run id to create "its own" is refused as taken, never answered with B's run.
    const again = await request(h, 'POST', '/v1/runs', { runId: 'scope-b' }, a.token);
    expect(again.status).toBe(409);
    expect(again.body.error?.code).toBe('RUN_ID_TAKEN');
    expect(JSON.stringify(again.body)).not.toContain('RUNNING');
  });

  it('lists only its own runs; a tenant-scope token lists them all', async () => {
    await created('list-a', a.token);
    await created('list-b', b.token);
    const ids = async (token: string) =>
      (
        (await request(h, 'GET', '/v1/runs?limit=100', undefined, token)).body.runs as { runId: string }[]
      ).map((r) => r.runId);
    const seenByA = await ids(a.token);
    expect(seenByA).toContain('list-a');
    expect(seenByA).not.toContain('list-b');
    const own = await h.env.db
      .selectFrom('runs')
      .select('run_id')
      .where('created_by_token', '=', a.id)
      .execute();
    expect([...seenByA].sort()).toEqual(own.map((r) => r.run_id).sort());
    const seenByB = await ids(b.token);
    expect(seenByB).toEqual(expect.arrayContaining(['list-a', 'list-b']));
  });

  it('works on its own runs on every route; a tenant-scope token reaches them too', async () => {
    await created('own-1', a.token);
    const first = await call(h, 'own-1', note('own-1-o1'), a.token);
    expect(first.status).toBe(202);
    expect((await stepAt(h, 'own-1', 0))?.status).toBe('INTENDED');
    expect(await countRows(h, 'saga_log', 'own-1')).toBe(1);
    expect((await call(h, 'own-1', { tool: 'echo', args: { text: 'hi' } }, a.token)).status).toBe(200);
    const view = await request(h, 'GET', '/v1/runs/own-1?stepsLimit=1', undefined, a.token);
    expect(view.status).toBe(200);
    expect(view.body.steps).toEqual([expect.objectContaining({ stepIdx: 0, tool: 'create_note' })]);
    const events = await request(h, 'GET', '/v1/runs/own-1/events', undefined, a.token);
    expect(events.status).toBe(200);
    expect((events.body.events as unknown[]).length).toBeGreaterThan(0);
    expect((await request(h, 'GET', '/v1/runs/own-1', undefined, b.token)).status).toBe(200);

    await executeStep(h, 'own-1', 0, { to: 'CONFIRMED' });
    const pivot = await request(
      h,
      'POST',
      '/v1/runs/own-1/pivot',
      { commit: commit('own-1-c'), summary: 's' },
      a.token,
    );
    expect(pivot.status).toBe(202);

    await created('own-2', a.token);
    const unwind = await request(h, 'POST', '/v1/runs/own-2/unwind', { reason: 'changed my mind' }, a.token);
    expect(unwind.status).toBe(202);
    await created('own-3', a.token);
    const complete = await request(h, 'POST', '/v1/runs/own-3/complete', undefined, a.token);
    expect(complete.status).toBe(200);
    expect(complete.body).toMatchObject({ runId: 'own-3', status: 'COMPLETED' });
  });

  it('sees no run without a creator (made outside the API); a tenant-scope token does', async () => {
    await createRun(h.env.db, { runId: 'scope-legacy', tenantId: 't1', metadata: {} });
    expect((await request(h, 'GET', '/v1/runs/scope-legacy', undefined, a.token)).status).toBe(404);
    expect((await request(h, 'GET', '/v1/runs/scope-legacy', undefined, b.token)).status).toBe(200);
  });
});

describe('the deciding token', () => {
  it('is recorded on an approval decided, a pivot superseded and a case resolved, and shown in the views', async () => {
    await created('decide-1', a.token);
    await call(h, 'decide-1', note('decide-1-o1'), a.token);
    await executeStep(h, 'decide-1', 0, { to: 'CONFIRMED' });
    const pivot = (body: Record<string, unknown>) =>
      request(h, 'POST', '/v1/runs/decide-1/pivot', body, a.token);
    const first = await pivot({ commit: commit('decide-1-c1'), summary: 'first' });
    expect(first.status).toBe(202);
    // A second proposal supersedes the first: that move names the proposing agent's token.
    const second = await pivot({ commit: commit('decide-1-c2'), summary: 'second' });
    expect(second.status).toBe(202);
    const superseded = await h.env.db
      .selectFrom('approvals')
      .select(['status', 'decided_by', 'decided_by_token'])
      .where('id', '=', first.body.approvalId as string)
      .executeTakeFirstOrThrow();
    expect(superseded).toEqual({ status: 'superseded', decided_by: 'bot-a', decided_by_token: a.id });

    const id = second.body.approvalId as string;
    const decided = await request(
      h,
      'POST',
      `/v1/approvals/${id}/decision`,
      { decision: 'approve', hash: second.body.hash },
      op.token,
    );
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ status: 'approved', decidedBy: 'alice', decidedByTokenId: op.id });
    const row = await h.env.db
      .selectFrom('approvals')
      .select(['decided_by', 'decided_by_token'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ decided_by: 'alice', decided_by_token: op.id });
    const read = await request(h, 'GET', `/v1/approvals/${id}`, undefined, op.token);
    expect(read.body).toMatchObject({ decidedBy: 'alice', decidedByTokenId: op.id });
    // The agent's own run view names the decider too.
    const view = await request(h, 'GET', '/v1/runs/decide-1', undefined, a.token);
    const approvals = view.body.approvals as { id: string; decidedBy: string; decidedByTokenId: string }[];
    expect(approvals.find((x) => x.id === id)).toMatchObject({ decidedBy: 'alice', decidedByTokenId: op.id });
    expect(approvals.find((x) => x.id === first.body.approvalId)).toMatchObject({
      status: 'superseded',
      decidedByTokenId: a.id,
    });
    // A pending approval names nobody.
    await created('decide-pending', b.token);
    await call(h, 'decide-pending', note('decide-pending-o1'), b.token);
    await executeStep(h, 'decide-pending', 0, { to: 'CONFIRMED' });
    const pending = await request(
      h,
      'POST',
      '/v1/runs/decide-pending/pivot',
      { commit: commit('decide-pending-c'), summary: 's' },
      b.token,
    );
    const pendingView = await request(
      h,
      'GET',
      `/v1/approvals/${pending.body.approvalId as string}`,
      undefined,
      op.token,
    );
    expect(pendingView.body).toMatchObject({ status: 'pending', decidedBy: null, decidedByTokenId: null });
  });

  it('is recorded on a case resolved, and shown in the case view', async () => {
    await created('case-1', b.token);
    await h.env.db.transaction().execute((trx) =>
      openCase(trx, {
        runId: 'case-1',
        stepIdx: null,
        tenantId: 't1',
        reason: 'a person must look',
        evidence: {},
      }),
    );
    const list = await request(h, 'GET', '/v1/cases?status=open&runId=case-1', undefined, op.token);
    const [c] = list.body.cases as { id: string; resolvedByTokenId: string | null }[];
    expect(c?.resolvedByTokenId).toBeNull();
    const done = await request(
      h,
      'POST',
      `/v1/cases/${c!.id}/resolve`,
      { action: 'resolve_run', comment: 'checked by hand' },
      op.token,
    );
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'resolved', resolvedBy: 'alice', resolvedByTokenId: op.id });
    const row = await h.env.db
      .selectFrom('cases')
      .select(['resolved_by', 'resolved_by_token'])
      .where('run_id', '=', 'case-1')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ resolved_by: 'alice', resolved_by_token: op.id });
    const view = await request(h, 'GET', '/v1/runs/case-1', undefined, b.token);
    expect(view.body.cases).toEqual([
      expect.objectContaining({ resolvedBy: 'alice', resolvedByTokenId: op.id }),
    ]);
  });
});

describe('issuing an own-runs token', () => {
  it('is refused for an operator, naming scope, and writes nothing', async () => {
    const before = await h.env.db.selectFrom('api_tokens').select('id').execute();
    await expect(
      issueApiToken(h.env.db, { tenantId: 't1', role: TokenRole.OPERATOR, scope: TokenScope.OWN_RUNS }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST', field: 'scope' });
    expect(await h.env.db.selectFrom('api_tokens').select('id').execute()).toEqual(before);
  });
});
