/**
 * A tenant's policy floor: the rule "floor ∧ run" (`applyPolicyFloor`, pure: the stricter value wins, field
 * by field, and the fields the floor decided are named), the floor's compare-and-set on its version
 * (`setPolicyFloor`, on real Postgres), and a run created under it (`bindRunUnderFloor` + `createRun`): the
 * stored policy and budget are the floor-applied ones, another tenant's runs are untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  applyPolicyFloor,
  bindRun,
  bindRunUnderFloor,
  createRun,
  createSagaRegistry,
  createToolRegistry,
  defineSaga,
  defineTool,
  NO_POLICY_FLOOR,
  policyFloorSchema,
  PolicyVersionMismatchError,
  readPolicyFloor,
  setPolicyFloor,
  UNBOUND_RUN,
  type PolicyFloor,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('policyfloor');
});
afterAll(async () => env?.close());

const NOW = new Date('2026-12-01T12:00:00.000Z');
const floor = (policy: PolicyFloor['policy'], budget: PolicyFloor['budget'] = {}): PolicyFloor => ({
  policy,
  budget,
});

const note = defineTool({
  name: 'note',
  class: 'reversible',
  version: 1,
  args: z.object({ orderId: z.string() }),
  compensate: () => ({ tool: 'note', args: { orderId: 'undo' } }),
  execute: () => Promise.resolve({ externalRef: 'N-1', result: {} }),
  lookup: () => Promise.resolve(null),
});
const definitions = createSagaRegistry(createToolRegistry([note]), [
  defineSaga({
    name: 'notes',
    version: 1,
    steps: [{ id: 'first', tool: 'note' }],
    budget: { deadlineMs: 600_000, maxSteps: 50 },
  }),
]);

describe('applyPolicyFloor', () => {
  it('ORs the constraining booleans: a floor true wins over a run false, a floor false requires nothing', () => {
    const run = bindRun(undefined, {
      policy: { requirePivot: false, unwindOnFailure: false, approveDeletions: true },
    });
    const f = floor({ requirePivot: true, unwindOnFailure: true, approveDeletions: false });
    const { binding, fields } = applyPolicyFloor(run, f, NOW);
    expect(binding.policy).toEqual({ requirePivot: true, unwindOnFailure: true, approveDeletions: true });
    expect(fields).toEqual(['policy.requirePivot', 'policy.unwindOnFailure']);
    // A floor false never turns off what the run asked for, nor adds a key.
    expect(applyPolicyFloor(UNBOUND_RUN, floor({ requirePivot: false }), NOW).binding.policy).toEqual({});
  });

  it('takes the lower money limit per currency; a currency only the floor names takes the floor', () => {
    const run = bindRun(undefined, { policy: { approveMoneyAbove: { USD: 1_000_000, EUR: 500 } } });
    const { binding, fields } = applyPolicyFloor(
      run,
      floor({ approveMoneyAbove: { usd: 10_000, EUR: 800, GBP: 100 } }),
      NOW,
    );
    expect(binding.policy.approveMoneyAbove).toEqual({ usd: 10_000, eur: 500, gbp: 100 });
    expect(fields).toEqual(['policy.approveMoneyAbove.usd', 'policy.approveMoneyAbove.gbp']);
    // The floor's money limit makes the run governed: only the intake transaction holds money.
    expect(run.governed).toBe(true);
    expect(
      applyPolicyFloor(UNBOUND_RUN, floor({ approveMoneyAbove: { usd: 1 } }), NOW).binding.governed,
    ).toBe(true);
  });

  it('keeps a tighter run as it is, and names no field', () => {
    const run = bindRun(undefined, {
      policy: { requirePivot: true, approveMoneyAbove: { usd: 500 }, authorityTtlMs: 1_000 },
      budget: { maxSteps: 3 },
    });
    const { binding, fields } = applyPolicyFloor(
      run,
      floor(
        { requirePivot: true, approveMoneyAbove: { USD: 10_000 }, authorityTtlMs: 3_600_000 },
        { maxSteps: 10 },
      ),
      NOW,
    );
    expect(binding).toBe(run);
    expect(fields).toEqual([]);
  });

  it('takes the shorter authority and the lower budget ceilings, per currency for amounts', () => {
    const run = bindRun(undefined, {
      policy: { authorityTtlMs: 7_200_000 },
      budget: { maxSteps: 100, maxAttempts: 2, maxAmount: { usd: 90_000 } },
    });
    const { binding, fields } = applyPolicyFloor(
      run,
      floor(
        { authorityTtlMs: 3_600_000 },
        { maxSteps: 20, maxAttempts: 5, maxAmount: { USD: 50_000, eur: 7 } },
      ),
      NOW,
    );
    expect(binding.policy).toEqual({ authorityTtlMs: 3_600_000 });
    expect(binding.budget).toEqual({ maxSteps: 20, maxAttempts: 2, maxAmount: { usd: 50_000, eur: 7 } });
    expect(fields).toEqual([
      'policy.authorityTtlMs',
      'budget.maxSteps',
      'budget.maxAmount.usd',
      'budget.maxAmount.eur',
    ]);
  });

  it("takes the earlier deadline: a run's absolute one, a definition's deadlineMs, or the floor's", () => {
    const f = floor({}, { deadlineMs: 60_000 });
    // No deadline of its own: the floor's deadlineMs, added to the creation time by createRun.
    const none = applyPolicyFloor(UNBOUND_RUN, f, NOW);
    expect(none.binding).toMatchObject({ deadlineMs: 60_000, governed: true });
    expect(none.fields).toEqual(['budget.deadline']);
    // A definition's longer deadlineMs gives way to the floor's.
    const defined = bindRun(definitions, { definition: { name: 'notes' } });
    expect(applyPolicyFloor(defined, f, NOW).binding.deadlineMs).toBe(60_000);
    // An absolute deadline later than now + floor: now + floor, absolute.
    const late = bindRun(undefined, { budget: { deadline: '2026-12-01T13:00:00Z' } });
    const lateFloored = applyPolicyFloor(late, f, NOW).binding;
    expect(lateFloored.budget.deadline).toBe('2026-12-01T12:01:00.000Z');
    expect(lateFloored.deadlineMs).toBeNull();
    // An earlier one stays.
    const early = bindRun(undefined, { budget: { deadline: '2026-12-01T12:00:30Z' } });
    expect(applyPolicyFloor(early, f, NOW).binding.budget.deadline).toBe('2026-12-01T12:00:30.000Z');
  });

  it('changes nothing without a floor', () => {
    const run = bindRun(undefined, { policy: { requirePivot: false } });
    expect(applyPolicyFloor(run, NO_POLICY_FLOOR, NOW)).toEqual({ binding: run, fields: [] });
  });
});

describe('policyFloorSchema', () => {
  it('refuses an unknown field and a bad value, naming the field', () => {
    const unknown = policyFloorSchema.safeParse({ policy: { requirePivott: true } });
    expect(unknown.success).toBe(false);
    expect(unknown.error?.issues[0]).toMatchObject({ path: ['policy'], keys: ['requirePivott'] });
    const bad = policyFloorSchema.safeParse({ policy: { approveMoneyAbove: { USD: -1 } } });
    expect(bad.error?.issues[0]?.path).toEqual(['policy', 'approveMoneyAbove', 'USD']);
    const budget = policyFloorSchema.safeParse({ budget: { deadline: '2026-12-01T00:00:00Z' } });
    expect(budget.error?.issues[0]).toMatchObject({ path: ['budget'], keys: ['deadline'] });
  });
});

describe('setPolicyFloor', () => {
  const by = { actor: 'alice', tokenId: 'tok_alice' };

  it('is a compare-and-set on the version; each part named replaces the stored part', async () => {
    expect((await readPolicyFloor(env.db, 'cas')).floor).toMatchObject({
      version: 0,
      policy: {},
      budget: {},
    });
    const first = await setPolicyFloor(env.db, {
      tenantId: 'cas',
      policy: { requirePivot: true, approveMoneyAbove: { USD: 10_000 } },
      ifVersion: 0,
      ...by,
    });
    expect(first).toMatchObject({
      version: 1,
      policy: { requirePivot: true, approveMoneyAbove: { usd: 10_000 } },
      budget: {},
      updatedBy: 'alice',
      updatedByToken: 'tok_alice',
    });
    // A second "create" and a stale version are refused, naming the current version; nothing changes.
    for (const ifVersion of [0, 7]) {
      const refused = await setPolicyFloor(env.db, {
        tenantId: 'cas',
        budget: { maxSteps: 1 },
        ifVersion,
        ...by,
      }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(PolicyVersionMismatchError);
      expect(refused).toMatchObject({ expected: ifVersion, version: 1 });
    }
    const second = await setPolicyFloor(env.db, {
      tenantId: 'cas',
      budget: { maxSteps: 9 },
      ifVersion: 1,
      ...by,
    });
    expect(second).toMatchObject({ version: 2, policy: { requirePivot: true }, budget: { maxSteps: 9 } });
    // Without ifVersion: last writer wins; `{}` clears a part.
    const third = await setPolicyFloor(env.db, { tenantId: 'cas', policy: {}, actor: 'bob', tokenId: null });
    expect(third).toMatchObject({ version: 3, policy: {}, budget: { maxSteps: 9 }, updatedBy: 'bob' });
    // A stale version against a tenant with no floor yet.
    await expect(
      setPolicyFloor(env.db, { tenantId: 'cas-none', policy: {}, ifVersion: 1, ...by }),
    ).rejects.toMatchObject({
      expected: 1,
      version: 0,
    });
    expect((await readPolicyFloor(env.db, 'cas-none')).floor.version).toBe(0);
  });
});

describe('a run created under the floor', () => {
  it("stores the floor-applied policy and budget, records the floor on its creation event, and leaves another tenant's runs alone", async () => {
    await setPolicyFloor(env.db, {
      tenantId: 'floored',
      policy: { requirePivot: true, approveMoneyAbove: { usd: 10_000 } },
      budget: { deadlineMs: 3_600_000 },
      actor: 'alice',
      tokenId: 'tok_alice',
    });
    const binding = await bindRunUnderFloor(env.db, definitions, 'floored', {
      policy: { requirePivot: false, approveMoneyAbove: { USD: 1_000_000 } },
    });
    const r = await createRun(env.db, { runId: 'floored-1', tenantId: 'floored', metadata: {}, binding });
    if ('taken' in r) throw new Error('taken');
    expect(r.run.policy).toEqual({ requirePivot: true, approveMoneyAbove: { usd: 10_000 } });
    expect(r.run.governed).toBe(true);
    expect(r.run.deadline_at!.getTime() - r.run.created_at.getTime()).toBe(3_600_000);
    const event = await env.db
      .selectFrom('step_events')
      .select('detail')
      .where('run_id', '=', 'floored-1')
      .executeTakeFirstOrThrow();
    expect(event.detail).toMatchObject({
      floor: {
        version: 1,
        fields: ['policy.requirePivot', 'policy.approveMoneyAbove.usd', 'budget.deadline'],
      },
    });

    // A run created without any body takes the floor too.
    const bare = await bindRunUnderFloor(env.db, undefined, 'floored', undefined);
    expect(bare.policy).toEqual({ requirePivot: true, approveMoneyAbove: { usd: 10_000 } });

    // Another tenant has no floor: its run is exactly what it asked for.
    const other = await bindRunUnderFloor(env.db, undefined, 'unfloored', {
      policy: { requirePivot: false },
    });
    expect(other).toEqual(bindRun(undefined, { policy: { requirePivot: false } }));
    expect(other.floor).toBeUndefined();
  });
});
