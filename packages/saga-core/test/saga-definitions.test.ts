import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createSagaRegistry,
  createToolRegistry,
  defineSaga,
  defineTool,
  ErrorCode,
  loadToolModule,
  pivotStepOf,
  SagaDefinitionError,
  type AnyTool,
  type SagaInvariant,
  type SagaSpec,
  type SagaStepSpec,
} from '@agent-saga/core';

const lookup = () => Promise.resolve(null);
const execute = () => Promise.resolve({ externalRef: 'X-1', result: {} });
const tool = (name: string, cls: 'pure' | 'reversible' | 'compensatable' | 'irreversible'): AnyTool =>
  defineTool({
    name,
    class: cls,
    version: 1,
    args: z.object({}),
    execute,
    ...(cls === 'pure' ? {} : { lookup }),
    ...(cls === 'reversible' || cls === 'compensatable'
      ? { compensate: () => ({ tool: 'undo', args: {} }) }
      : {}),
  }) as AnyTool;

const tools = createToolRegistry([
  tool('get_order', 'pure'),
  tool('create_draft', 'reversible'),
  tool('authorize', 'compensatable'),
  tool('capture', 'compensatable'),
  tool('send_email', 'irreversible'),
  tool('undo', 'irreversible'),
]);

const saga = (steps: readonly SagaStepSpec[], extra: Partial<SagaSpec> = {}): SagaSpec => ({
  name: 'refund',
  version: 1,
  steps,
  ...extra,
});

/** The pivot story: a read, a draft, a hold, then the capture (pivot) and the email. */
const pivotSteps: SagaStepSpec[] = [
  { id: 'order', tool: 'get_order' },
  { id: 'draft', tool: 'create_draft' },
  { id: 'hold', tool: 'authorize' },
  { id: 'capture', tool: 'capture', pivot: true },
  { id: 'email', tool: 'send_email' },
];

function refusal(fn: () => unknown): SagaDefinitionError {
  try {
    fn();
  } catch (e) {
    if (e instanceof SagaDefinitionError) return e;
    throw e;
  }
  throw new Error('expected a SagaDefinitionError');
}
const defineRefusal = (spec: unknown) => refusal(() => defineSaga(spec as SagaSpec));
const registryRefusal = (...specs: unknown[]) => refusal(() => createSagaRegistry(tools, specs));

describe('defineSaga', () => {
  it('fills defaults: each step after every earlier one, no pivot, not repeatable; frozen', () => {
    const def = defineSaga(saga(pivotSteps));
    expect(def.steps.map((s) => s.dependsOn)).toEqual([
      [],
      ['order'],
      ['order', 'draft'],
      ['order', 'draft', 'hold'],
      ['order', 'draft', 'hold', 'capture'],
    ]);
    expect(def.steps.map((s) => s.repeatable)).toEqual([false, false, false, false, false]);
    expect(pivotStepOf(def)?.id).toBe('capture');
    expect(Object.isFrozen(def) && Object.isFrozen(def.steps) && Object.isFrozen(def.steps[0])).toBe(true);
    expect(new SagaDefinitionError('x', 'f', 'm').code).toBe(ErrorCode.SAGA_DEFINITION);
  });

  it('keeps a declared dependsOn, an empty one, and one naming a later step', () => {
    const def = defineSaga(
      saga([
        { id: 'a', tool: 'get_order', dependsOn: ['c'] },
        { id: 'b', tool: 'get_order', dependsOn: [], repeatable: true },
        { id: 'c', tool: 'get_order', dependsOn: [] },
      ]),
    );
    expect(def.steps.map((s) => s.dependsOn)).toEqual([['c'], [], []]);
    expect(def.steps[1]!.repeatable).toBe(true);
  });

  it('stores invariant, budget, policy and retry as given (not enforced in this slice)', () => {
    const invariant: SagaInvariant = () => Promise.resolve({ holds: true });
    const def = defineSaga(
      saga([{ id: 'a', tool: 'get_order', retry: { maxAttempts: 3, backoffMs: 500 } }], {
        invariant,
        budget: { maxSteps: 10, maxAmount: { usd: 5_000 }, deadlineMs: 60_000, maxAttempts: 20 },
        policy: { requirePivot: true, approveMoneyAbove: { EUR: 10_000 }, authorityTtlMs: 3_600_000 },
      }),
    );
    expect(def.invariant).toBe(invariant);
    expect(def.budget).toEqual({
      maxSteps: 10,
      maxAmount: { usd: 5_000 },
      deadlineMs: 60_000,
      maxAttempts: 20,
    });
    expect(def.policy?.approveMoneyAbove).toEqual({ EUR: 10_000 });
    expect(def.steps[0]!.retry).toEqual({ maxAttempts: 3, backoffMs: 500 });
    expect(Object.isFrozen(def.budget?.maxAmount)).toBe(true);
  });

  it.each([
    ['a bad name', { name: 'Refund' }, 'name', /\[a-z\]/],
    ['a bad version', { version: 0 }, 'version', /positive integer/],
    ['no steps', { steps: [] }, 'steps', /at least one step/],
    ['an unknown field', { budgett: {} }, 'budgett', /not a field/],
    ['a malformed budget', { budget: { maxAmount: { usd: 1.5 } } }, 'budget.maxAmount.usd', /./],
    ['a bad currency', { budget: { maxAmount: { dollars: 1 } } }, 'budget.maxAmount.dollars', /currency/],
    ['an unknown policy field', { policy: { requirePivott: true } }, 'policy.requirePivott', /not a field/],
    ['an invariant that is not a function', { invariant: 'holds' }, 'invariant', /function/],
  ])('refuses %s, naming %s', (_what, extra, field, message) => {
    const e = defineRefusal({ ...saga([{ id: 'a', tool: 'get_order' }]), ...extra });
    expect(e.field).toBe(field);
    expect(e.message).toMatch(message);
  });

  it('refuses a malformed step, naming the step and its field', () => {
    expect(
      defineRefusal(
        saga([
          { id: 'a', tool: 'get_order' },
          { id: 'B', tool: 'x' },
        ]),
      ).field,
    ).toBe('steps[1].id');
    expect(defineRefusal(saga([{ id: 'a', tool: '' }])).field).toBe('steps[0].tool');
    const typo = defineRefusal(saga([{ id: 'a', tool: 'get_order', dependson: [] } as SagaStepSpec]));
    expect(typo.field).toBe('steps[0].dependson');
    expect(defineRefusal(saga([{ id: 'a', tool: 'get_order', retry: { maxAttempts: 0 } }])).field).toBe(
      'steps[0].retry.maxAttempts',
    );
  });

  it('refuses a repeated step id, naming the repeat and the first', () => {
    const e = defineRefusal(
      saga([
        { id: 'a', tool: 'get_order' },
        { id: 'b', tool: 'get_order' },
        { id: 'a', tool: 'capture' },
      ]),
    );
    expect(e.field).toBe('steps[2].id');
    expect(e.message).toMatch(/repeats "a", the id of steps\[0\]/);
    expect(e.message).toMatch(/^saga "refund@1": steps\[2\]\.id:/);
  });

  it('refuses a dependency on no declared step, on itself, or named twice', () => {
    const missing = defineRefusal(
      saga([
        { id: 'a', tool: 'get_order' },
        { id: 'b', tool: 'get_order' },
        { id: 'c', tool: 'get_order' },
        { id: 'd', tool: 'get_order', dependsOn: ['a', 'hold'] },
      ]),
    );
    expect(missing.field).toBe('steps[3].dependsOn');
    expect(missing.message).toMatch(/"hold", which the saga does not declare/);
    const self = defineRefusal(saga([{ id: 'a', tool: 'get_order', dependsOn: ['a'] }]));
    expect(self.field).toBe('steps[0].dependsOn');
    expect(self.message).toMatch(/itself/);
    const twice = defineRefusal(
      saga([
        { id: 'a', tool: 'get_order' },
        { id: 'b', tool: 'get_order', dependsOn: ['a', 'a'] },
      ]),
    );
    expect(twice.field).toBe('steps[1].dependsOn');
  });

  it('refuses circular dependencies, naming the first step on the cycle and the cycle', () => {
    const e = defineRefusal(
      saga([
        { id: 'a', tool: 'get_order', dependsOn: [] },
        { id: 'b', tool: 'get_order', dependsOn: ['d'] },
        { id: 'c', tool: 'get_order', dependsOn: ['b'] },
        { id: 'd', tool: 'get_order', dependsOn: ['c'] },
      ]),
    );
    expect(e.field).toBe('steps[1].dependsOn');
    expect(e.message).toMatch(/circular: b → d → c → b/);
    // A forward reference meets the default (every earlier step): a cycle too.
    const viaDefault = defineRefusal(
      saga([
        { id: 'a', tool: 'get_order', dependsOn: ['b'] },
        { id: 'b', tool: 'get_order' },
      ]),
    );
    expect(viaDefault.field).toBe('steps[0].dependsOn');
    expect(viaDefault.message).toMatch(/a → b → a/);
  });

  it('refuses a second pivot, naming it and the first', () => {
    const e = defineRefusal(
      saga([
        { id: 'a', tool: 'authorize', pivot: true },
        { id: 'b', tool: 'capture' },
        { id: 'c', tool: 'send_email', pivot: true },
      ]),
    );
    expect(e.field).toBe('steps[2].pivot');
    expect(e.message).toMatch(/at most one pivot; steps\[0\] \("a"\)/);
  });
});

describe('createSagaRegistry', () => {
  it('registers a pivot saga whose irreversible steps stand after the pivot, and one without any', () => {
    const r = createSagaRegistry(tools, [
      defineSaga(saga(pivotSteps)),
      defineSaga({ name: 'reads', version: 1, steps: [{ id: 'order', tool: 'get_order' }] }),
      // An irreversible pivot is the first step the approval commits: allowed.
      defineSaga({
        name: 'tell',
        version: 1,
        steps: [
          { id: 'draft', tool: 'create_draft' },
          { id: 'email', tool: 'send_email', pivot: true },
        ],
      }),
    ]);
    expect(r.list().map((d) => d.name)).toEqual(['reads', 'refund', 'tell']);
    expect(r.tools).toBe(tools);
  });

  it('refuses a step whose tool is not registered, naming steps[i].tool', () => {
    const e = registryRefusal(
      saga([
        { id: 'order', tool: 'get_order' },
        { id: 'hold', tool: 'authorize' },
        { id: 'ship', tool: 'reship' },
      ]),
    );
    expect(e.field).toBe('steps[2].tool');
    expect(e.message).toMatch(/"reship", which is not registered/);
  });

  it('refuses an irreversible step when the saga has no pivot', () => {
    const e = registryRefusal(
      saga([
        { id: 'order', tool: 'get_order' },
        { id: 'email', tool: 'send_email' },
      ]),
    );
    expect(e.field).toBe('steps[1].tool');
    expect(e.message).toMatch(/send_email is irreversible and the saga has no pivot/);
  });

  it('refuses an irreversible step before the pivot, naming its dependsOn', () => {
    const e = registryRefusal(
      saga([
        { id: 'order', tool: 'get_order' },
        { id: 'email', tool: 'send_email' },
        { id: 'hold', tool: 'authorize' },
        { id: 'capture', tool: 'capture', pivot: true },
      ]),
    );
    expect(e.field).toBe('steps[1].dependsOn');
    expect(e.message).toMatch(/stands before the pivot \(steps\[3\], "capture"\)/);
  });

  it('refuses an irreversible step beside the pivot (not after it in dependency order)', () => {
    const e = registryRefusal(
      saga([
        { id: 'order', tool: 'get_order' },
        { id: 'capture', tool: 'capture', pivot: true },
        { id: 'email', tool: 'send_email', dependsOn: ['order'] },
      ]),
    );
    expect(e.field).toBe('steps[2].dependsOn');
    expect(e.message).toMatch(/does not stand after the pivot/);
  });

  it('refuses a pure pivot', () => {
    const e = registryRefusal(saga([{ id: 'order', tool: 'get_order', pivot: true }]));
    expect(e.field).toBe('steps[0].pivot');
  });

  it('re-validates a plain object: a repeated step id, a cycle, are refused at registration too', () => {
    const repeated = registryRefusal(
      saga([
        { id: 'a', tool: 'get_order' },
        { id: 'a', tool: 'get_order' },
      ]),
    );
    expect(repeated.field).toBe('steps[1].id');
    const cycle = registryRefusal(
      saga([
        { id: 'a', tool: 'get_order', dependsOn: ['b'] },
        { id: 'b', tool: 'get_order', dependsOn: ['a'] },
      ]),
    );
    expect(cycle.field).toBe('steps[0].dependsOn');
  });

  it('keeps several versions of one name: get(name) is the highest, get(name, v) that one', () => {
    const v = (version: number, steps: SagaStepSpec[]) => defineSaga({ name: 'refund', version, steps });
    const r = createSagaRegistry(tools, [
      v(1, [{ id: 'order', tool: 'get_order' }]),
      v(3, pivotSteps),
      v(2, [
        { id: 'order', tool: 'get_order' },
        { id: 'hold', tool: 'authorize' },
      ]),
    ]);
    expect(r.get('refund')?.version).toBe(3);
    expect(r.get('refund', 2)?.steps.map((s) => s.id)).toEqual(['order', 'hold']);
    expect(r.get('refund', 4)).toBeUndefined();
    expect(r.get('reship')).toBeUndefined();
    expect(r.versions('refund')).toEqual([1, 2, 3]);
    expect(r.versions('reship')).toEqual([]);
    expect(r.list().map((d) => d.version)).toEqual([1, 2, 3]);
  });

  it('refuses one name and version registered twice', () => {
    const one = defineSaga(saga([{ id: 'a', tool: 'get_order' }]));
    const e = refusal(() => createSagaRegistry(tools, [one, one]));
    expect(e.field).toBe('version');
    expect(e.message).toMatch(/refund@1.*registered twice/);
  });
});

describe('loadToolModule', () => {
  const modulePath = (name: string) => fileURLToPath(new URL(`./saga-modules/${name}.ts`, import.meta.url));

  it('loads the tools and the definitions a module exports', async () => {
    const m = await loadToolModule(modulePath('with-definitions'));
    expect(m.tools.list().map((t) => t.name)).toEqual(['get_order', 'create_ticket', 'close_ticket']);
    expect(m.definitions.list().map((d) => `${d.name}@${d.version}`)).toEqual([
      'look_up@1',
      'open_and_close@1',
    ]);
    expect(m.definitions.tools).toBe(m.tools);
  });

  it('loads a module without definitions as before: its tools, no definitions', async () => {
    const m = await loadToolModule(modulePath('tools-only'));
    expect(m.tools.list()).toHaveLength(3);
    expect(m.definitions.list()).toEqual([]);
  });

  it('refuses definitions that are not an array, and a definition naming a tool the module lacks', async () => {
    const notArray = await loadToolModule(modulePath('definitions-not-an-array')).catch((e: unknown) => e);
    expect(notArray).toBeInstanceOf(SagaDefinitionError);
    expect((notArray as SagaDefinitionError).field).toBe('definitions');
    const unknown = await loadToolModule(modulePath('unknown-tool')).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(SagaDefinitionError);
    expect((unknown as SagaDefinitionError).field).toBe('steps[1].tool');
    expect((unknown as SagaDefinitionError).saga).toBe('refund_and_reship@2');
  });
});
