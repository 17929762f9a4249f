/**
 * An UNKNOWN step whose tool's lookup finds the vendor's record of the call refused under the key
 * (`refusedUnderKey`: Stripe's PaymentIntent left `requires_confirmation`, its 500 saved under the key, so a
 * re-send is told the same 500). The reconciler must not believe the refusal while the commit horizon runs
 * (a request the vendor still holds may yet complete), and past it must settle the step FAILED with the
 * refusal, as the executor would have, instead of proving it absent and sending it again until the
 * re-dispatch budget sends it to a person. The one exception: a vendor that dedupes by key whose answer to
 * the step's last attempt was a 500 (`answeredUnderKey`) holds nothing in flight, so the refusal is believed
 * at once, horizon or not; a 500 that answered an older attempt excuses nothing. Before the horizon, a
 * refusal whose last send nobody saw answered is sent again under the key past the lag (`resendable`): the
 * deduping vendor replays its saved answer, and that settles the step.
 *
 * One reconcile pass in this process (`claimReconcilableSteps`, then `reconcileStep`, as the worker runs
 * them), over a step written by the harness's `unknownStep`, with a `create_note` whose lookup the test
 * controls: the fixture tools loaded by a reconciler process have no lookup that can answer a refusal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ClientError,
  createLogger,
  createToolRegistry,
  defineTool,
  ref,
  refusedUnderKey,
  StepEventKind,
  StepStatus,
  type StepRow,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { deleteNote } from '../../../test/fixtures/effect-tools.js';
import { eventsOf } from '../../../test/fixtures/dispatcher-processes.js';
import { ReconcileOutcome } from '../src/index.js';
import {
  mustRead,
  outboxOf as outboxOfIn,
  reconcileOnce as reconcileOnceIn,
  unknownStep,
  type UnsettledStep,
} from './reconciler-harness.js';

/** Why 1 s: the tool's timeout, its commit horizon (none declared); `unknownStep`'s "1 s here". */
const TIMEOUT_MS = 1_000;
/** Why 60 s: far past the horizon (and a lag of 0), so the first pass may believe what it sees. */
const LONG_AGO_MS = 60_000;
const OWNER = 'refused-test-reconciler';

const refusal = () => new ClientError('vendor left it incomplete', { vendorCode: 'x_incomplete' });

/** `create_note` as the fixtures declare it, but whose lookup finds the call refused under the key. */
const sent: string[] = [];
const looked: string[] = [];
const refusingNoteSpec = {
  name: 'create_note',
  class: 'compensatable',
  version: 1,
  args: z.object({ orderId: z.string().min(1), text: z.string() }),
  compensate: (_args, key) => ({ tool: 'delete_note', args: { note: ref(key), reason: 'rolled back' } }),
  execute: (_args, ctx) => {
    sent.push(ctx.idempotencyKey);
    return Promise.resolve({ externalRef: 'FX-never', result: {} });
  },
  lookup: (key) => {
    looked.push(key);
    return Promise.resolve(refusedUnderKey(refusal()));
  },
  lookupLagMs: 0,
  timeoutMs: TIMEOUT_MS,
} satisfies Parameters<typeof defineTool>[0];
const registry = createToolRegistry([defineTool(refusingNoteSpec), deleteNote]);

/** Why 10 min: a horizon no test outlives, so only the answered 500 can let the refusal be believed. */
const LONG_HORIZON_MS = 600_000;
/** The same `create_note`, but its vendor dedupes by key (it saves its answer, a 500 too, under the key). */
const dedupingRegistry = createToolRegistry([
  defineTool({ ...refusingNoteSpec, dedupesByKey: true, commitHorizonMs: LONG_HORIZON_MS }),
  deleteNote,
]);
const logger = createLogger({ level: 'silent', name: 'refused-under-key-test' });

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('reconcile_refused');
});
afterAll(async () => env?.close());

const reconcileOnce = (s: UnsettledStep, tools = registry) =>
  reconcileOnceIn(env, s, { registry: tools, owner: OWNER, logger });
const outboxOf = (key: string) => outboxOfIn(env, key);

describe('a lookup that finds the call refused under the key', () => {
  it('is not believed within the horizon: the step stays UNKNOWN, is not sent again', async () => {
    const s = await unknownStep(env, 'refused-early');
    const before: StepRow = await mustRead(env, s.key);
    const r = await reconcileOnce(s);
    expect(r).toMatchObject({ outcome: ReconcileOutcome.AWAITING_LAG, status: StepStatus.UNKNOWN });

    const after = await mustRead(env, s.key);
    expect(after).toMatchObject({
      status: StepStatus.UNKNOWN,
      attempts: before.attempts,
      error: before.error,
    });
    expect(await outboxOf(s.key)).toHaveLength(1);
    const events = await eventsOf(env.db, s.runId, s.stepIdx);
    expect(events.filter((e) => e.to_status === StepStatus.FAILED)).toEqual([]);
    // It was looked up, and what the lookup saw is on record for when the horizon has passed.
    expect(events.filter((e) => e.kind === StepEventKind.LOOKUP).map((e) => e.detail)).toMatchObject([
      { seen: 'refused' },
    ]);
  });

  it('past the horizon settles the step FAILED with the refusal, as the executor would have', async () => {
    const s = await unknownStep(env, 'refused-late', { attemptedAgoMs: LONG_AGO_MS });
    const before = await mustRead(env, s.key);
    const outboxBefore = await outboxOf(s.key);
    const r = await reconcileOnce(s);
    expect(r).toMatchObject({ outcome: ReconcileOutcome.FAILED, status: StepStatus.FAILED });
    expect(r.redispatchNo).toBeUndefined();

    const after = await mustRead(env, s.key);
    expect(after.status).toBe(StepStatus.FAILED);
    expect(after.error).toEqual({
      code: 'CLIENT_ERROR',
      message: 'vendor left it incomplete',
      vendorCode: 'x_incomplete',
    });
    // Nothing sent again: no new dispatch, no new attempt, and the tool never called.
    expect(after.attempts).toBe(before.attempts);
    expect(await outboxOf(s.key)).toEqual(outboxBefore);
    expect(sent).toEqual([]);
    expect(looked.filter((k) => k === s.key)).toHaveLength(1);

    const events = await eventsOf(env.db, s.runId, s.stepIdx);
    expect(events.filter((e) => e.kind === StepEventKind.LOOKUP).map((e) => e.detail)).toMatchObject([
      { seen: 'refused', refused: { message: 'vendor left it incomplete', vendorCode: 'x_incomplete' } },
    ]);
    expect(events.filter((e) => e.to_status === StepStatus.FAILED)).toHaveLength(1);
    expect(events.some((e) => e.to_status === StepStatus.NOT_EXECUTED)).toBe(false);
  });
});

describe('a refusal under the key after the last attempt was answered 500 by a vendor that dedupes by key', () => {
  /** The step as the executor left it after attempt `answered` of `attempts` was answered 500, just now. */
  async function answered500Step(runId: string, o: { attempts: number; answered: number }) {
    const s = await unknownStep(env, runId);
    await env.db
      .updateTable('saga_log')
      .set({
        attempts: o.attempts,
        error: JSON.stringify({
          code: 'OUTCOME_UNKNOWN',
          message: 'An unexpected error occurred',
          status: 500,
          attempt: o.answered,
        }),
      })
      .where('idempotency_key', '=', s.key)
      .execute();
    return s;
  }

  it('settles the step FAILED at the first pass, well inside the horizon, and sends nothing again', async () => {
    const s = await answered500Step('refused-500', { attempts: 1, answered: 1 });
    const outboxBefore = await outboxOf(s.key);
    const r = await reconcileOnce(s, dedupingRegistry);
    expect(r).toMatchObject({ outcome: ReconcileOutcome.FAILED, status: StepStatus.FAILED });

    const after = await mustRead(env, s.key);
    expect(after.status).toBe(StepStatus.FAILED);
    expect(after.error).toEqual({
      code: 'CLIENT_ERROR',
      message: 'vendor left it incomplete',
      vendorCode: 'x_incomplete',
    });
    expect(after.attempts).toBe(1);
    expect(await outboxOf(s.key)).toEqual(outboxBefore);
    expect(sent).toEqual([]);
  });

  it('sends it again under the key when the 500 answered an older attempt: only the vendor knows the last', async () => {
    const s = await answered500Step('refused-500-stale', { attempts: 2, answered: 1 });
    const r = await reconcileOnce(s, dedupingRegistry);
    // Not FAILED on the older answer: the last attempt may still be in flight. The re-send is told the
    // vendor's saved answer for the key (or a 409 while the last attempt runs), which settles it.
    expect(r).toMatchObject({ outcome: ReconcileOutcome.NOT_EXECUTED, status: StepStatus.INTENDED });
    const after = await mustRead(env, s.key);
    expect(after.status).toBe(StepStatus.INTENDED);
    expect(after.idempotency_key).toBe(s.key);
    expect(await outboxOf(s.key)).toHaveLength(2);
    const events = await eventsOf(env.db, s.runId, s.stepIdx);
    expect(events.filter((e) => e.to_status === StepStatus.FAILED)).toEqual([]);
  });

  it('a refusal whose send nobody saw end (a lapsed lease, nothing stored) is sent again under the key', async () => {
    const s = await unknownStep(env, 'refused-lapsed');
    const r = await reconcileOnce(s, dedupingRegistry);
    expect(r).toMatchObject({ outcome: ReconcileOutcome.NOT_EXECUTED, status: StepStatus.INTENDED });
    expect(await outboxOf(s.key)).toHaveLength(2);
    // The vendor replays its saved 500 to that send; the executor stores it, and the next pass believes
    // the refusal at once.
    await env.db
      .updateTable('saga_log')
      .set({
        status: StepStatus.UNKNOWN,
        attempts: 2,
        error: JSON.stringify({ code: 'OUTCOME_UNKNOWN', message: 'replayed', status: 500, attempt: 2 }),
      })
      .where('idempotency_key', '=', s.key)
      .execute();
    const again = await reconcileOnce(s, dedupingRegistry);
    expect(again).toMatchObject({ outcome: ReconcileOutcome.FAILED, status: StepStatus.FAILED });
    expect((await mustRead(env, s.key)).error).toMatchObject({ vendorCode: 'x_incomplete' });
    expect(sent).toEqual([]);
  });
});
