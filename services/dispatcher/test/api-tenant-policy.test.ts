/**
 * The tenant's policy floor over HTTP (`GET`/`PUT /v1/policy`), with the support agent's real tools
 * (nothing is executed): an operator sets the floor; an agent's run asking for less gets the floor (its run
 * view shows the policy that applies, its creation event which fields the floor decided), so an
 * irreversible call outside a pivot is refused and a charge above the floor's limit is held; a run asking
 * for more keeps its own; agent tokens are refused, bad bodies name the field, a stale version is a 409;
 * runs created before the floor and another tenant's runs are untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '@agent-saga/core';
import { startBoundRunsHarness, type BoundRunsHarness } from './bound-runs-harness.js';

let h: BoundRunsHarness;
let otherOperator: string;
beforeAll(async () => {
  h = await startBoundRunsHarness('api_tenant_policy');
  otherOperator = await createApiToken(h.env.db, { tenantId: 't2', role: 'operator', label: 'bo' });
});
afterAll(async () => h?.close());

const put = async (body: unknown, token = h.token.operator) => {
  const res = await h.app.inject({
    method: 'PUT',
    url: '/v1/policy',
    headers: { authorization: `Bearer ${token}` },
    payload: body as Record<string, unknown>,
  });
  return {
    status: res.statusCode,
    body: res.json<Record<string, unknown> & { error?: Record<string, unknown> }>(),
  };
};
const getPolicy = (token = h.token.operator) => h.request('GET', '/v1/policy', undefined, token);
const create = async (body: Record<string, unknown>, token = h.token.agent) => {
  const r = await h.request('POST', '/v1/runs', body, token);
  if (r.status !== 201) throw new Error(`run not created: ${r.status} ${JSON.stringify(r.body)}`);
};
const call = (runId: string, tool: string, args: Record<string, unknown>, stepIdx: number) =>
  h.request('POST', `/v1/runs/${runId}/calls`, { tool, args, stepIdx });
const charge = (amount: number) => ({
  customerId: 'cus_ada',
  amount,
  currency: 'usd',
  reason: 'replacement',
});
const email = { to: 'ada@example.com', template: 'refund_confirmation' };

const FLOOR = { requirePivot: true, approveMoneyAbove: { USD: 10_000 } };

describe('the policy floor', () => {
  it('starts empty; an operator sets it, recorded with who set it', async () => {
    // A run created before any floor: its policy is exactly what it asked for, then and later.
    await create({ runId: 'before-floor', policy: { requirePivot: false } });

    expect((await getPolicy()).body).toMatchObject({ version: 0, policy: {}, budget: {}, updatedBy: null });
    const set = await put({ policy: FLOOR, ifVersion: 0 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      version: 1,
      policy: { requirePivot: true, approveMoneyAbove: { usd: 10_000 } },
      budget: {},
      updatedBy: 'alice',
    });
    expect(set.body.updatedByTokenId).toMatch(/^tok_/);
    expect((await getPolicy()).body).toEqual(set.body);

    const before = await h.request('GET', '/v1/runs/before-floor');
    expect(before.body.policy).toEqual({ requirePivot: false });
  });

  it('gives a run asking for less the floor: requirePivot refuses an irreversible call, a charge above the floor is held', async () => {
    await create({ runId: 'loose', policy: { requirePivot: false, approveMoneyAbove: { USD: 1_000_000 } } });
    const view = await h.request('GET', '/v1/runs/loose');
    expect(view.body.policy).toEqual({ requirePivot: true, approveMoneyAbove: { usd: 10_000 } });

    const events = await h.request('GET', '/v1/runs/loose/events');
    const created = (
      events.body.events as { stepIdx: number | null; detail: Record<string, unknown> }[]
    ).find((e) => e.stepIdx === null);
    expect(created?.detail.floor).toEqual({
      version: 1,
      fields: ['policy.requirePivot', 'policy.approveMoneyAbove.usd'],
    });

    const irreversible = await call('loose', 'send_email', email, 0);
    expect(irreversible.status).toBe(409);
    expect(irreversible.body.error).toMatchObject({ code: 'PIVOT_REQUIRED', tool: 'send_email' });
    expect(await h.written('loose')).toMatchObject({ steps: 0, outbox: 0 });

    const held = await call('loose', 'charge_card', charge(15_000), 0);
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ status: 'AWAITING_APPROVAL', stepIdx: 0 });
    expect(await h.written('loose')).toMatchObject({ steps: 1, outbox: 0, approvals: 1 });
    const approvals = (await h.request('GET', '/v1/runs/loose')).body.approvals as {
      evidence: Record<string, unknown>;
    }[];
    expect(approvals[0]?.evidence).toMatchObject({
      money: { currency: 'usd', amount: 15_000, limit: 10_000 },
    });

    // Below the floor's limit a charge goes out as usual.
    const below = await call('loose', 'charge_card', charge(9_000), 1);
    expect(below.body).toMatchObject({ status: 'INTENDED', stepIdx: 1 });
  });

  it('lets a run tighten the floor: USD 500 stays 500', async () => {
    await create({ runId: 'tight', policy: { approveMoneyAbove: { USD: 500 } } });
    const view = await h.request('GET', '/v1/runs/tight');
    expect(view.body.policy).toEqual({ requirePivot: true, approveMoneyAbove: { usd: 500 } });
    const held = await call('tight', 'charge_card', charge(600), 0);
    expect(held.body).toMatchObject({ status: 'AWAITING_APPROVAL' });
  });

  it('applies to a run created with an empty body (a fresh id, no policy of its own)', async () => {
    const r = await h.request('POST', '/v1/runs', {});
    expect(r.status).toBe(201);
    const view = await h.request('GET', `/v1/runs/${String(r.body.runId)}`);
    expect(view.body.policy).toEqual({ requirePivot: true, approveMoneyAbove: { usd: 10_000 } });
  });

  it('refuses agent tokens, reads included: 403 FORBIDDEN, nothing changed', async () => {
    const refused = await put({ policy: {} }, h.token.agent);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: 'FORBIDDEN',
      message: expect.stringContaining('policy floor') as unknown,
    });
    expect((await getPolicy(h.token.agent)).status).toBe(403);
    expect((await getPolicy()).body).toMatchObject({ version: 1, policy: { requirePivot: true } });
  });

  it('refuses a bad body with 400 naming the field, nothing changed', async () => {
    const negative = await put({ policy: { approveMoneyAbove: { USD: -5 } } });
    expect(negative.status).toBe(400);
    expect(negative.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'policy.approveMoneyAbove.USD' });

    const unknown = await put({ policy: { requirePivott: true } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'policy' });
    expect(String(unknown.body.error?.message)).toContain('requirePivott');

    const runDeadline = await put({ budget: { deadline: '2026-12-01T00:00:00Z' } });
    expect(runDeadline.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'budget' });

    const version = await put({ policy: {}, ifVersion: 'one' });
    expect(version.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'ifVersion' });
    expect((await getPolicy()).body).toMatchObject({ version: 1, policy: { requirePivot: true } });
  });

  it('refuses a stale ifVersion with 409 naming the current version; the current one applies', async () => {
    const stale = await put({ budget: { maxSteps: 3 }, ifVersion: 0 });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'POLICY_VERSION_MISMATCH', version: 1, expected: 0 });
    expect((await getPolicy()).body).toMatchObject({ version: 1, budget: {} });

    const ok = await put({ budget: { maxSteps: 3 }, ifVersion: 1 });
    expect(ok.body).toMatchObject({ version: 2, policy: { requirePivot: true }, budget: { maxSteps: 3 } });
    await create({ runId: 'capped', budget: { maxSteps: 50 } });
    expect((await h.request('GET', '/v1/runs/capped')).body.budget).toEqual({ maxSteps: 3 });
  });

  it('is documented in the OpenAPI schema, both methods', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, Record<string, unknown>>;
    }>();
    expect(Object.keys(doc.paths['/v1/policy'] ?? {})).toEqual(expect.arrayContaining(['get', 'put']));
    expect(JSON.stringify(doc.paths['/v1/policy'])).toContain('ifVersion');
  });

  it('never reaches another tenant: its floor and its runs are its own', async () => {
    expect((await getPolicy(otherOperator)).body).toMatchObject({ version: 0, policy: {} });
    await create({ runId: 't2-run', policy: { requirePivot: false } }, h.token.other);
    const view = await h.request('GET', '/v1/runs/t2-run', undefined, h.token.other);
    expect(view.body.policy).toEqual({ requirePivot: false });
    expect(view.body.budget).toEqual({});
  });
});
