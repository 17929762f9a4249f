/**
 * Budgets and the forward money approval over HTTP, with the support agent's real tools (nothing is
 * executed): `maxSteps`, `maxAmount` (counted from what each tool declares it moves, by currency),
 * `deadline` and `maxAttempts` (agent retries counted) each refused `409 BUDGET_EXCEEDED` naming the field,
 * writing nothing, on bound runs and on unbound runs that set a budget; a definition's limits under the
 * run's own; a charge above `approveMoneyAbove` held for an approval whose evidence names the amount and the
 * limit. The send after approval against the sandbox is `test/forward-money-approval.test.ts`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BudgetExceededError, createSagaClient } from '@agent-saga/client';
import { startBoundRunsHarness, type BoundRunsHarness } from './bound-runs-harness.js';

let h: BoundRunsHarness;
beforeAll(async () => {
  h = await startBoundRunsHarness('api_budgets');
});
afterAll(async () => h?.close());

const ticket = (orderId: string) => ({ summary: `Refund for order #${orderId}`, orderId });
const charge = (amount: number, currency = 'usd') => ({
  customerId: 'cus_ada',
  amount,
  currency,
  reason: 'replacement',
});

const create = async (body: Record<string, unknown>) => {
  const r = await h.request('POST', '/v1/runs', body);
  if (r.status !== 201) throw new Error(`run not created: ${r.status} ${JSON.stringify(r.body)}`);
};
const call = (runId: string, tool: string, args: Record<string, unknown>, stepIdx: number) =>
  h.request('POST', `/v1/runs/${runId}/calls`, { tool, args, stepIdx });

describe('budget.maxSteps', () => {
  it('refuses the step that would pass it on an unbound run with a budget, writing nothing', async () => {
    await create({ runId: 'steps-1', budget: { maxSteps: 2 } });
    expect((await call('steps-1', 'create_ticket', ticket('1'), 0)).status).toBe(202);
    expect((await call('steps-1', 'create_ticket', ticket('2'), 1)).status).toBe(202);
    const third = await call('steps-1', 'create_ticket', ticket('3'), 2);
    expect(third.status).toBe(409);
    expect(third.body.error).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      field: 'budget.maxSteps',
      limit: 2,
      used: 2,
    });
    expect(await h.written('steps-1')).toMatchObject({ steps: 2, outbox: 2 });
  });
});

describe('budget.maxAmount', () => {
  it('refuses a charge that would pass the limit of its currency, counting what earlier steps move', async () => {
    await create({ runId: 'money-1', budget: { maxAmount: { USD: 10_000 } } });
    expect((await call('money-1', 'charge_card', charge(6_000), 0)).status).toBe(202);
    const over = await call('money-1', 'charge_card', charge(5_000), 1);
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      field: 'budget.maxAmount.usd',
      limit: 10_000,
      used: 6_000,
    });
    expect(await h.written('money-1')).toMatchObject({ steps: 1, outbox: 1 });
    // Up to the limit exactly goes through; a currency the budget does not name is not limited.
    expect((await call('money-1', 'charge_card', charge(4_000), 1)).status).toBe(202);
    expect((await call('money-1', 'charge_card', charge(50_000, 'EUR'), 2)).status).toBe(202);
  });

  it('does not count a step that never took effect (FAILED)', async () => {
    await create({ runId: 'money-2', budget: { maxAmount: { usd: 5_000 } } });
    expect((await call('money-2', 'charge_card', charge(5_000), 0)).status).toBe(202);
    const refused = await call('money-2', 'charge_card', charge(1_000), 1);
    expect(refused.body.error).toMatchObject({ field: 'budget.maxAmount.usd', used: 5_000 });
    await h.env.db
      .updateTable('saga_log')
      .set({ status: 'FAILED', error: JSON.stringify({ code: 'CLIENT_ERROR', message: 'declined' }) })
      .where('run_id', '=', 'money-2')
      .where('step_idx', '=', 0)
      .execute();
    expect((await call('money-2', 'charge_card', charge(1_000), 1)).status).toBe(202);
  });

  it("refuses on a bound run by the run's own limit over the definition's", async () => {
    await create({
      runId: 'money-bound',
      definition: { name: 'refund_and_reship' },
      budget: { maxAmount: { usd: 3_000 } },
    });
    expect((await call('money-bound', 'create_ticket', ticket('1182'), 0)).status).toBe(202);
    const over = await call('money-bound', 'charge_card', charge(4_900), 1);
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({ code: 'BUDGET_EXCEEDED', field: 'budget.maxAmount.usd' });
    expect(await h.written('money-bound')).toMatchObject({ steps: 1 });
  });
});

describe('budget.deadline', () => {
  it('refuses a call after the deadline and takes one before it', async () => {
    const deadline = new Date(Date.now() + 1_500).toISOString();
    await create({ runId: 'deadline-1', budget: { deadline } });
    expect((await call('deadline-1', 'create_ticket', ticket('1'), 0)).status).toBe(202);
    const run = await h.env.db
      .selectFrom('runs')
      .select(['deadline_at', 'budget'])
      .where('run_id', '=', 'deadline-1')
      .executeTakeFirstOrThrow();
    expect(run.deadline_at?.toISOString()).toBe(deadline);
    expect(run.budget).toEqual({ deadline });
    await sleep(Math.max(0, new Date(deadline).getTime() - Date.now() + 200));
    const late = await call('deadline-1', 'create_ticket', ticket('2'), 1);
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      field: 'budget.deadline',
      limit: deadline,
    });
    expect(await h.written('deadline-1')).toMatchObject({ steps: 1 });
  });
});

describe('budget.maxAttempts', () => {
  it("counts an agent's retry of a step, and refuses the new step that would pass the limit", async () => {
    const client = createSagaClient({ baseUrl: h.url, token: h.token.agent });
    await client.createRun({ runId: 'attempts-1', budget: { maxAttempts: 1 } });
    expect((await call('attempts-1', 'create_ticket', ticket('1'), 0)).status).toBe(202);
    // The model retries step 0 in other words: answered with the step (a RETRY_CALL, nothing sent).
    const retry = await call('attempts-1', 'create_ticket', { ...ticket('1'), summary: 'again' }, 0);
    expect(retry.status).toBe(202);
    const next = await client
      .call('attempts-1', 'create_ticket', ticket('2'), { stepIdx: 1 })
      .catch((e: unknown) => e);
    expect(next).toBeInstanceOf(BudgetExceededError);
    expect(next).toMatchObject({ field: 'budget.maxAttempts', limit: 1, used: 1 });
    expect(await h.written('attempts-1')).toMatchObject({ steps: 1 });
  });
});

describe('budget.maxAttempts on a re-dispatch', () => {
  /** A run whose step 0 was sent `attempts` times and proven not executed, as the reconciler leaves it. */
  const provenAbsent = async (runId: string, maxAttempts: number, attempts: number) => {
    await create({ runId, budget: { maxAttempts } });
    expect((await call(runId, 'create_ticket', ticket('1'), 0)).status).toBe(202);
    await h.env.db
      .updateTable('saga_log')
      .set({ status: 'NOT_EXECUTED', attempts })
      .where('run_id', '=', runId)
      .where('step_idx', '=', 0)
      .execute();
  };

  it("refuses the agent's retry that would send the step again past the limit, writing nothing", async () => {
    await provenAbsent('redispatch-1', 2, 2);
    const retry = await call('redispatch-1', 'create_ticket', ticket('1'), 0);
    expect(retry.status).toBe(409);
    expect(retry.body.error).toMatchObject({ code: 'BUDGET_EXCEEDED', field: 'budget.maxAttempts', used: 2 });
    expect(await h.written('redispatch-1')).toMatchObject({ outbox: 1 });
    const step = await h.env.db
      .selectFrom('saga_log')
      .select('status')
      .where('run_id', '=', 'redispatch-1')
      .executeTakeFirstOrThrow();
    expect(step.status).toBe('NOT_EXECUTED');
  });

  it('re-dispatches it within the limit', async () => {
    await provenAbsent('redispatch-2', 3, 2);
    const retry = await call('redispatch-2', 'create_ticket', ticket('1'), 0);
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({ status: 'INTENDED' });
    expect(await h.written('redispatch-2')).toMatchObject({ outbox: 2 });
  });
});

describe('policy.approveMoneyAbove', () => {
  it('holds a charge above the limit for an approval naming the amount and the limit, and sends one below it', async () => {
    await create({
      runId: 'approve-1',
      definition: { name: 'refund_and_reship' },
      policy: { approveMoneyAbove: { USD: 5_000 } },
    });
    expect((await call('approve-1', 'create_ticket', ticket('1182'), 0)).status).toBe(202);
    const held = await call('approve-1', 'charge_card', charge(7_500), 1);
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ status: 'AWAITING_APPROVAL', stepIdx: 1 });
    // Nothing to send yet: the held step has no outbox message.
    expect(await h.written('approve-1')).toMatchObject({ steps: 2, outbox: 1, approvals: 1 });
    const view = await h.request('GET', '/v1/runs/approve-1');
    const approvals = view.body.approvals as {
      kind: string;
      summary: string;
      evidence: Record<string, unknown>;
    }[];
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({
      kind: 'step',
      evidence: { money: { currency: 'usd', amount: 7_500, limit: 5_000 } },
    });
    expect(approvals[0]!.summary).toMatch(/moves 7500 usd .* above the run's approveMoneyAbove of 5000/);

    await create({ runId: 'approve-2', policy: { approveMoneyAbove: { usd: 5_000 } } });
    const below = await call('approve-2', 'charge_card', charge(5_000), 0);
    expect(below.body).toMatchObject({ status: 'INTENDED' });
    expect(await h.written('approve-2')).toMatchObject({ steps: 1, outbox: 1, approvals: 0 });
  });
});
