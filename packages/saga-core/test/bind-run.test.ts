/**
 * A run's binding (`bindRun`) and the grouped intake's treatment of a governed run (`recordNewIntents`): the
 * definition's budget and policy defaults under the run's own, `deadlineMs` from the creation time, the
 * 0013 columns as stored, and a governed run's slot left to the intake transaction (null, nothing written)
 * while an unbound run's step in the same group is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  bindRun,
  createRun,
  createSagaRegistry,
  createToolRegistry,
  defineSaga,
  defineTool,
  payloadHash,
  recordNewIntents,
  stepKey,
  UNBOUND_RUN,
  UnknownDefinitionError,
  type NewIntent,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('bindrun');
});
afterAll(async () => env?.close());

const note = defineTool({
  name: 'note',
  class: 'reversible',
  version: 1,
  args: z.object({ orderId: z.string() }),
  identity: ['orderId'],
  compensate: () => ({ tool: 'note', args: { orderId: 'undo' } }),
  execute: () => Promise.resolve({ externalRef: 'N-1', result: {} }),
  lookup: () => Promise.resolve(null),
});
const tools = createToolRegistry([note]);
const definitions = createSagaRegistry(tools, [
  defineSaga({
    name: 'notes',
    version: 1,
    steps: [{ id: 'first', tool: 'note' }],
    budget: { maxSteps: 5, maxAttempts: 9, deadlineMs: 60_000, maxAmount: { EUR: 100 } },
    policy: { approveMoneyAbove: { usd: 10 }, requirePivot: true },
  }),
  defineSaga({ name: 'notes', version: 2, steps: [{ id: 'first', tool: 'note' }] }),
]);

describe('bindRun', () => {
  it("merges the definition's budget and policy under the run's own, field by field", () => {
    const b = bindRun(definitions, {
      definition: { name: 'notes', version: 1 },
      budget: { maxSteps: 2 },
      policy: { requirePivot: false, approveMoneyAbove: { USD: 20 } },
    });
    expect(b.definition).toEqual({ name: 'notes', version: 1 });
    expect(b.budget).toEqual({ maxSteps: 2, maxAttempts: 9, maxAmount: { eur: 100 } });
    expect(b.deadlineMs).toBe(60_000);
    expect(b.policy).toEqual({ requirePivot: false, approveMoneyAbove: { usd: 20 } });
    expect(b.governed).toBe(true);
  });

  it("takes the highest version by default, and a run's own deadline over the definition's deadlineMs", () => {
    expect(bindRun(definitions, { definition: { name: 'notes' } }).definition).toEqual({
      name: 'notes',
      version: 2,
    });
    const deadline = '2030-01-01T00:00:00+02:00';
    const b = bindRun(definitions, { definition: { name: 'notes', version: 1 }, budget: { deadline } });
    expect(b.budget.deadline).toBe('2029-12-31T22:00:00.000Z');
    expect(b.deadlineMs).toBeNull();
  });

  it('refuses an unknown name or version naming the field, and a plan without a definition', () => {
    const refusal = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return err as { code: string; field: string };
      }
      throw new Error('not refused');
    };
    expect(refusal(() => bindRun(definitions, { definition: { name: 'nope' } }))).toBeInstanceOf(
      UnknownDefinitionError,
    );
    expect(refusal(() => bindRun(definitions, { definition: { name: 'nope' } })).field).toBe(
      'definition.name',
    );
    expect(refusal(() => bindRun(definitions, { definition: { name: 'notes', version: 3 } })).field).toBe(
      'definition.version',
    );
    expect(refusal(() => bindRun(definitions, { plan: [{ step: 'first', args: {} }] }))).toMatchObject({
      code: 'PLAN_INVALID',
      field: 'plan',
    });
  });

  it('leaves a run with only requirePivot ungoverned, and one with a budget alone governed', () => {
    expect(bindRun(definitions, { policy: { requirePivot: true } }).governed).toBe(false);
    expect(bindRun(undefined, { budget: { maxSteps: 1 } }).governed).toBe(true);
    expect(bindRun(undefined, { policy: { approveMoneyAbove: { usd: 1 } } }).governed).toBe(true);
  });
});

describe('createRun with a binding', () => {
  it("stores a definition's deadlineMs from the creation time, in budget.deadline and deadline_at", async () => {
    const binding = bindRun(definitions, {
      definition: { name: 'notes', version: 1 },
      goal: 'g',
      actor: 'a',
    });
    const r = await createRun(env.db, { runId: 'bound-1', tenantId: 'acme', metadata: {}, binding });
    if ('taken' in r) throw new Error('taken');
    const run = r.run;
    expect(run.deadline_at?.getTime()).toBe(run.created_at.getTime() + 60_000);
    expect(run.budget.deadline).toBe(run.deadline_at?.toISOString());
    expect([run.definition_name, run.definition_version, run.goal, run.actor, run.governed]).toEqual([
      'notes',
      1,
      'g',
      'a',
      true,
    ]);
  });

  it('stores an unbound run exactly as before: no definition, no budget, not governed', async () => {
    const r = await createRun(env.db, {
      runId: 'plain-1',
      tenantId: 'acme',
      metadata: {},
      binding: UNBOUND_RUN,
    });
    if ('taken' in r) throw new Error('taken');
    expect(r.run).toMatchObject({
      definition_name: null,
      plan: null,
      plan_hash: null,
      budget: {},
      deadline_at: null,
      governed: false,
      policy: {},
    });
  });
});

describe('recordNewIntents and a governed run', () => {
  const intent = (runId: string): NewIntent => {
    const key = stepKey(runId, 0, 'note');
    const args = { orderId: runId };
    return {
      runId,
      stepIdx: 0,
      tenantId: 'acme',
      tool: 'note',
      toolClass: 'reversible',
      toolVersion: 1,
      idempotencyKey: key,
      args,
      payloadHash: payloadHash('note', args),
      compensation: null,
      correction: null,
      audience: [],
      dependsOn: null,
      operation: { tool: 'note', args, identity: { orderId: runId } },
    };
  };

  it("leaves a governed run's step to the intake transaction, and writes an unbound run's in the same group", async () => {
    await createRun(env.db, {
      runId: 'gov-1',
      tenantId: 'acme',
      metadata: {},
      binding: bindRun(undefined, { budget: { maxSteps: 3 } }),
    });
    await createRun(env.db, { runId: 'free-1', tenantId: 'acme', metadata: {} });
    const [governed, free] = await recordNewIntents(env.db, [intent('gov-1'), intent('free-1')], 0);
    expect(governed).toBeNull();
    expect(free).toMatchObject({ run_id: 'free-1', step_idx: 0, status: 'INTENDED' });
    const rows = await env.db.selectFrom('saga_log').select('run_id').where('run_id', '=', 'gov-1').execute();
    expect(rows).toEqual([]);
  });
});
