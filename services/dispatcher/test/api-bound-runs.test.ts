/**
 * Runs bound to a saga definition, over HTTP, with the support agent's real tool module and its two
 * built-in definitions: an unknown definition refused naming the field; a plan out of order, with an unknown
 * step, with an irreversible step before the pivot or with bad arguments, each refused naming the entry and
 * creating nothing; a valid plan stored with its hash (the run view shows it, the definition, goal, actor
 * and budget); a tool outside the definition refused with nothing written; a call matched to its step
 * (`saga_log.step_id`); PLAN_MISMATCH; the pivot approval showing the plan; the client's classes; the
 * refusals in the OpenAPI document. An unbound run looks as it did.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSagaClient,
  NotInDefinitionError,
  PlanInvalidError,
  PlanMismatchError,
} from '@agent-saga/client';
import { canonicalJson } from '@agent-saga/core';
import { startBoundRunsHarness, type BoundRunsHarness } from './bound-runs-harness.js';

let h: BoundRunsHarness;
beforeAll(async () => {
  h = await startBoundRunsHarness('api_bound_runs', [
    // A definition whose ticket step is repeatable (a second ticket for one order is part of the workflow).
    { name: 'ticket_notes', version: 1, steps: [{ id: 'note', tool: 'create_ticket', repeatable: true }] },
  ]);
});
afterAll(async () => h?.close());

const TICKET = { summary: 'Refund for order #1182', orderId: '1182' };
const CHARGE = { customerId: 'cus_ada', amount: 4900, currency: 'usd', reason: 'replacement' };
const RESHIP = { orderId: '1182', items: [{ sku: 'MUG-1', quantity: 1 }], reason: 'broken in transit' };
const ORDER = { orderId: '1182' };

const create = (body: Record<string, unknown>) => h.request('POST', '/v1/runs', body);
const call = (runId: string, body: Record<string, unknown>) =>
  h.request('POST', `/v1/runs/${runId}/calls`, body);
const runExists = async (runId: string) =>
  (await h.env.db.selectFrom('runs').select('run_id').where('run_id', '=', runId).executeTakeFirst()) !==
  undefined;

describe('POST /v1/runs with a definition', () => {
  it('refuses an unknown definition name or version, naming the field, and creates no run', async () => {
    const name = await create({ runId: 'unknown-def', definition: { name: 'refund_and_resend' } });
    expect(name.status).toBe(400);
    expect(name.body.error).toMatchObject({ code: 'UNKNOWN_DEFINITION', field: 'definition.name' });
    const version = await create({
      runId: 'unknown-def',
      definition: { name: 'refund_and_reship', version: 7 },
    });
    expect(version.status).toBe(400);
    expect(version.body.error).toMatchObject({ code: 'UNKNOWN_DEFINITION', field: 'definition.version' });
    expect(await runExists('unknown-def')).toBe(false);
  });

  it.each([
    [
      'a step listed before a step it depends on',
      'refund_and_reship',
      [
        { step: 'get_order', args: ORDER },
        { step: 'charge_card', args: CHARGE },
        { step: 'create_ticket', args: TICKET },
      ],
      'plan[1].step',
      /charge_card depends on create_ticket, which the plan lists after it \(plan\[2\]\)/,
    ],
    [
      'a step the definition does not declare',
      'refund_and_reship',
      [
        { step: 'get_order', args: ORDER },
        { step: 'create_tickets', args: TICKET },
      ],
      'plan[1].step',
      /"create_tickets" is not a step of refund_and_reship@1/,
    ],
    [
      'an irreversible step and no pivot before it',
      'refund_and_reship_pivot',
      [
        { step: 'get_order', args: ORDER },
        { step: 'send_email', args: { to: 'ada@example.com', template: 'refund_confirmation' } },
      ],
      'plan[1].step',
      /send_email is irreversible and the plan lists no pivot \(capture_payment\) before it/,
    ],
    [
      'arguments the step tool refuses',
      'refund_and_reship',
      [
        { step: 'create_ticket', args: TICKET },
        { step: 'charge_card', args: { ...CHARGE, amount: -5 } },
      ],
      'plan[1].args.amount',
      /plan\[1\]\.args\.amount/,
    ],
  ])(
    'refuses a plan with %s, naming the entry, and creates no run',
    async (_what, name, plan, field, msg) => {
      const runId = `bad-plan-${field.replace(/\W/g, '')}-${name.length}`;
      const r = await create({ runId, definition: { name }, plan });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'PLAN_INVALID', field });
      expect(String(r.body.error?.message)).toMatch(msg);
      expect(await runExists(runId)).toBe(false);
    },
  );

  it('refuses an irreversible step planned before the pivot, naming it', async () => {
    const r = await create({
      runId: 'bad-plan-pivot-order',
      definition: { name: 'refund_and_reship_pivot' },
      plan: [
        { step: 'send_email', args: { to: 'ada@example.com', template: 'refund_confirmation' } },
        { step: 'capture_payment', args: { paymentIntent: 'pi_1' } },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'PLAN_INVALID', field: 'plan[0].step' });
  });

  it('stores a valid plan with its canonical hash, and the run view shows it with the binding', async () => {
    const plan = [
      { step: 'get_order', args: ORDER },
      { step: 'create_ticket', args: TICKET },
      { step: 'charge_card', args: { ...CHARGE, currency: 'USD' } },
      { step: 'reship', args: RESHIP },
    ];
    const r = await create({
      runId: 'planned-1',
      definition: { name: 'refund_and_reship' },
      goal: 'refund and reship order 1182',
      actor: 'support-agent@acme',
      plan,
      budget: { maxSteps: 10, maxAmount: { USD: 10_000 } },
    });
    expect(r.status).toBe(201);
    // As an operator reads it: an agent token reads the plan's personal arguments as [PERSONAL].
    const view = await h.request('GET', '/v1/runs/planned-1', undefined, h.token.operator);
    expect(view.status).toBe(200);
    const stored = (view.body.plan as { step: string; args: Record<string, unknown> }[]) ?? [];
    // The hash of exactly what is shown (the parsed arguments, keys in any order).
    const expected = createHash('sha256').update(canonicalJson(stored)).digest('hex');
    expect(view.body).toMatchObject({
      definition: { name: 'refund_and_reship', version: 1 },
      goal: 'refund and reship order 1182',
      actor: 'support-agent@acme',
      planHash: expected,
      budget: { maxSteps: 10, maxAmount: { usd: 10_000 } },
      steps: [],
    });
    expect(stored.map((e) => e.step)).toEqual(['get_order', 'create_ticket', 'charge_card', 'reship']);
    expect(view.body.planHash).toMatch(/^[0-9a-f]{64}$/);

    // Creating it again is idempotent: the existing run, unchanged, whatever the repeat says.
    const again = await create({ runId: 'planned-1', definition: { name: 'refund_and_reship' } });
    expect(again.status).toBe(200);
    expect((await h.request('GET', '/v1/runs/planned-1')).body.planHash).toBe(expected);
  });

  it('shows an unbound run as before, with nulls for the binding, and keeps it ungoverned', async () => {
    expect((await create({ runId: 'plain-1', policy: { requirePivot: true } })).status).toBe(201);
    const view = await h.request('GET', '/v1/runs/plain-1');
    expect(view.body).toMatchObject({
      definition: null,
      goal: null,
      actor: null,
      plan: null,
      planHash: null,
      budget: {},
      policy: { requirePivot: true },
    });
    const row = await h.env.db
      .selectFrom('runs')
      .select(['governed', 'deadline_at'])
      .where('run_id', '=', 'plain-1')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ governed: false, deadline_at: null });
    const first = await call('plain-1', { tool: 'create_ticket', args: TICKET, stepIdx: 0 });
    expect(first.status).toBe(202);
  });
});

describe('calls on a bound run', () => {
  it('refuses a tool the definition does not name, writing nothing', async () => {
    await create({ runId: 'bound-out', definition: { name: 'refund_and_reship' } });
    const r = await call('bound-out', {
      tool: 'send_email',
      args: { to: 'ada@example.com', template: 'refund_confirmation' },
      stepIdx: 0,
    });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({
      code: 'NOT_IN_DEFINITION',
      field: 'tool',
      tool: 'send_email',
      definition: { name: 'refund_and_reship', version: 1 },
    });
    expect(await h.written('bound-out')).toEqual({ steps: 0, outbox: 0, events: 0, approvals: 0 });
    expect((await h.request('GET', '/v1/runs/bound-out')).body.steps).toEqual([]);

    // The same run takes a tool it does name: the refusal above was the definition's, not the run's.
    const ok = await call('bound-out', { tool: 'create_ticket', args: TICKET, stepIdx: 0 });
    expect(ok.status).toBe(202);
    expect(await h.written('bound-out')).toMatchObject({ steps: 1, outbox: 1 });
  });

  it('stores the definition step each call is matched to', async () => {
    await create({ runId: 'bound-match', definition: { name: 'refund_and_reship' } });
    expect((await call('bound-match', { tool: 'create_ticket', args: TICKET, stepIdx: 0 })).status).toBe(202);
    expect((await call('bound-match', { tool: 'charge_card', args: CHARGE, stepIdx: 1 })).status).toBe(202);
    const rows = await h.env.db
      .selectFrom('saga_log')
      .select(['step_idx', 'step_id'])
      .where('run_id', '=', 'bound-match')
      .orderBy('step_idx')
      .execute();
    expect(rows).toEqual([
      { step_idx: 0, step_id: 'create_ticket' },
      { step_idx: 1, step_id: 'charge_card' },
    ]);
    const view = await h.request('GET', '/v1/runs/bound-match');
    expect((view.body.steps as { stepId: string | null }[]).map((s) => s.stepId)).toEqual([
      'create_ticket',
      'charge_card',
    ]);
    // The definition has one create_ticket step, taken: a ticket for another order is not in it.
    const another = await call('bound-match', {
      tool: 'create_ticket',
      args: { ...TICKET, orderId: '1183' },
      stepIdx: 2,
    });
    expect(another.status).toBe(409);
    expect(another.body.error).toMatchObject({ code: 'NOT_IN_DEFINITION' });
    expect(String(another.body.error?.message)).toMatch(
      /every step of create_ticket in the definition is taken/,
    );
  });

  it('refuses a replanned duplicate on a bound run, unless the definition step is repeatable', async () => {
    await create({ runId: 'bound-dup', definition: { name: 'refund_and_reship' } });
    expect((await call('bound-dup', { tool: 'create_ticket', args: TICKET, stepIdx: 0 })).status).toBe(202);
    // Step 0 is still on its way: the repeat waits for it (it may yet fail).
    const early = await call('bound-dup', { tool: 'create_ticket', args: TICKET, stepIdx: 1 });
    expect(early.status).toBe(409);
    expect(early.body.error).toMatchObject({ code: 'STEP_UNRESOLVED', stepIdx: 0 });
    await h.env.db
      .updateTable('saga_log')
      .set({ status: 'CONFIRMED', external_ref: 'SUP-1' })
      .where('run_id', '=', 'bound-dup')
      .where('step_idx', '=', 0)
      .execute();
    const again = await call('bound-dup', { tool: 'create_ticket', args: TICKET, stepIdx: 1 });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'DUPLICATE_OPERATION', stepIdx: 0, status: 'CONFIRMED' });
    expect(await h.written('bound-dup')).toMatchObject({ steps: 1 });

    await create({ runId: 'bound-repeat', definition: { name: 'ticket_notes' } });
    for (const stepIdx of [0, 1])
      expect((await call('bound-repeat', { tool: 'create_ticket', args: TICKET, stepIdx })).status).toBe(202);
    const rows = await h.env.db
      .selectFrom('saga_log')
      .select(['step_idx', 'step_id'])
      .where('run_id', '=', 'bound-repeat')
      .orderBy('step_idx')
      .execute();
    expect(rows).toEqual([
      { step_idx: 0, step_id: 'note' },
      { step_idx: 1, step_id: 'note' },
    ]);
  });

  it('refuses a call whose identity arguments differ from the planned entry (PLAN_MISMATCH), writing nothing', async () => {
    await create({
      runId: 'bound-plan',
      definition: { name: 'refund_and_reship' },
      plan: [
        { step: 'create_ticket', args: TICKET },
        { step: 'charge_card', args: CHARGE },
      ],
    });
    const other = await call('bound-plan', {
      tool: 'create_ticket',
      args: { summary: 'Refund for order #9999', orderId: '9999' },
      stepIdx: 0,
    });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({
      code: 'PLAN_MISMATCH',
      field: 'args.orderId',
      fields: ['args.orderId'],
      planEntry: 0,
    });
    expect(await h.written('bound-plan')).toEqual({ steps: 0, outbox: 0, events: 0, approvals: 0 });

    // The planned order in other words goes through: only identity arguments are held to the plan.
    const planned = await call('bound-plan', {
      tool: 'create_ticket',
      args: { summary: 'Customer 1182 wants a refund', orderId: '1182' },
      stepIdx: 0,
    });
    expect(planned.status).toBe(202);
    const charge = await call('bound-plan', {
      tool: 'charge_card',
      args: { ...CHARGE, amount: 9900 },
      stepIdx: 1,
    });
    expect(charge.status).toBe(409);
    expect(charge.body.error).toMatchObject({ code: 'PLAN_MISMATCH', field: 'args.amount', planEntry: 1 });
    // reship is in the definition but not in the plan.
    const reship = await call('bound-plan', { tool: 'reship', args: RESHIP, stepIdx: 1 });
    expect(reship.status).toBe(409);
    expect(reship.body.error).toMatchObject({ code: 'PLAN_MISMATCH', field: 'tool' });
    expect(await h.written('bound-plan')).toMatchObject({ steps: 1, outbox: 1 });
  });

  it("shows the plan and its hash in a pivot approval's evidence", async () => {
    const plan = [
      { step: 'get_order', args: ORDER },
      { step: 'capture_payment', args: { paymentIntent: 'pi_sandbox_1' } },
    ];
    await create({ runId: 'bound-pivot', definition: { name: 'refund_and_reship_pivot' }, plan });
    const runView = await h.request('GET', '/v1/runs/bound-pivot');
    const proposed = await h.request('POST', '/v1/runs/bound-pivot/pivot', {
      commit: [{ tool: 'capture_payment', args: { paymentIntent: 'pi_sandbox_1' } }],
      summary: 'capture the held payment',
    });
    expect(proposed.status).toBe(202);
    const approval = await h.request(
      'GET',
      `/v1/approvals/${String(proposed.body.approvalId)}`,
      undefined,
      h.token.operator,
    );
    expect(approval.status).toBe(200);
    expect(approval.body.evidence).toMatchObject({ plan, planHash: runView.body.planHash });
    const staged = await h.env.db
      .selectFrom('saga_log')
      .select(['tool', 'step_id', 'status'])
      .where('run_id', '=', 'bound-pivot')
      .execute();
    expect(staged).toEqual([
      { tool: 'capture_payment', step_id: 'capture_payment', status: 'AWAITING_APPROVAL' },
    ]);
  });

  it('holds pivot commit steps to the plan and the budget, as calls are, staging nothing when refused', async () => {
    const plan = [{ step: 'capture_payment', args: { paymentIntent: 'pi_sandbox_1' } }];
    await create({ runId: 'bound-pivot-plan', definition: { name: 'refund_and_reship_pivot' }, plan });
    const other = await h.request('POST', '/v1/runs/bound-pivot-plan/pivot', {
      commit: [{ tool: 'capture_payment', args: { paymentIntent: 'pi_sandbox_2' } }],
      summary: 'capture another payment',
    });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'PLAN_MISMATCH' });
    expect(await h.written('bound-pivot-plan')).toEqual({ steps: 0, outbox: 0, events: 0, approvals: 0 });

    await create({
      runId: 'bound-pivot-budget',
      definition: { name: 'refund_and_reship_pivot' },
      budget: { maxSteps: 2 },
    });
    const tooMany = await h.request('POST', '/v1/runs/bound-pivot-budget/pivot', {
      commit: [
        { tool: 'capture_payment', args: { paymentIntent: 'pi_sandbox_1' } },
        { tool: 'open_ticket', args: { ticket: 'SUP-1' } },
        { tool: 'send_email', args: { to: 'ada@example.com', template: 'refund_confirmation' } },
      ],
      summary: 'commit three steps',
    });
    expect(tooMany.status).toBe(409);
    expect(tooMany.body.error).toMatchObject({ code: 'BUDGET_EXCEEDED', field: 'budget.maxSteps' });
    expect(await h.written('bound-pivot-budget')).toEqual({ steps: 0, outbox: 0, events: 0, approvals: 0 });
  });

  it('refuses a pivot commit step whose tool the definition does not allow, staging nothing', async () => {
    await create({ runId: 'bound-pivot-out', definition: { name: 'refund_and_reship_pivot' } });
    const proposed = await h.request('POST', '/v1/runs/bound-pivot-out/pivot', {
      commit: [{ tool: 'charge_card', args: CHARGE }],
      summary: 'charge instead of capturing',
    });
    expect(proposed.status).toBe(409);
    expect(proposed.body.error).toMatchObject({ code: 'NOT_IN_DEFINITION', tool: 'charge_card' });
    expect(await h.written('bound-pivot-out')).toEqual({ steps: 0, outbox: 0, events: 0, approvals: 0 });
  });
});

describe('the client', () => {
  it('creates a bound run, and throws the classes of PLAN_INVALID, NOT_IN_DEFINITION and PLAN_MISMATCH', async () => {
    const client = createSagaClient({ baseUrl: h.url, token: h.token.agent });
    const bad = await client
      .createRun({
        runId: 'client-bad',
        definition: { name: 'refund_and_reship' },
        plan: [{ step: 'charge_cards', args: CHARGE }],
      })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(PlanInvalidError);
    expect((bad as PlanInvalidError).field).toBe('plan[0].step');

    const made = await client.createRun({
      runId: 'client-1',
      definition: { name: 'refund_and_reship', version: 1 },
      goal: 'refund 1182',
      plan: [{ step: 'create_ticket', args: TICKET }],
      budget: { maxSteps: 3 },
    });
    expect(made).toMatchObject({ runId: 'client-1', created: true });
    const view = await client.getRun('client-1');
    expect(view).toMatchObject({
      definition: { name: 'refund_and_reship', version: 1 },
      goal: 'refund 1182',
      budget: { maxSteps: 3 },
    });
    expect(view.planHash).toMatch(/^[0-9a-f]{64}$/);

    const run = client.run('client-1');
    const outside = await run
      .call('send_email', { to: 'ada@example.com', template: 'refund_confirmation' })
      .catch((e: unknown) => e);
    expect(outside).toBeInstanceOf(NotInDefinitionError);
    expect((outside as NotInDefinitionError).definition).toEqual({ name: 'refund_and_reship', version: 1 });
    const mismatch = await run.call('create_ticket', { ...TICKET, orderId: '77' }).catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(PlanMismatchError);
    expect((mismatch as PlanMismatchError).field).toBe('args.orderId');
  });
});

describe('the OpenAPI document', () => {
  it("names each refusal of runs and calls with its code, and the binding's fields", async () => {
    const doc = (await h.app.inject({ url: '/docs/json' })).json<{
      paths: Record<
        string,
        { post?: { requestBody?: unknown; responses: Record<string, { description?: string }> } }
      >;
    }>();
    const runs = doc.paths['/v1/runs']?.post;
    expect(runs?.responses['400']?.description).toMatch(/UNKNOWN_DEFINITION/);
    expect(runs?.responses['400']?.description).toMatch(/PLAN_INVALID/);
    const body = JSON.stringify(runs?.requestBody);
    for (const field of ['definition', 'plan', 'budget', 'maxAmount', 'approveMoneyAbove', 'authorityTtlMs'])
      expect(body).toContain(field);
    const calls = doc.paths['/v1/runs/{runId}/calls']?.post;
    for (const code of ['NOT_IN_DEFINITION', 'PLAN_MISMATCH', 'BUDGET_EXCEEDED', 'DUPLICATE_OPERATION'])
      expect(calls?.responses['409']?.description).toContain(code);
  });
});
