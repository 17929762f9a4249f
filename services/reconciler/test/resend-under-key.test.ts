/**
 * An UNKNOWN step of a tool whose vendor dedupes by key (`dedupesByKey`: Stripe, the email send, shipping):
 * a "not found" past the tool's lookup lag, long before its commit horizon, proves nothing absent, but the
 * vendor makes at most one effect per key, so the reconciler may send the step again under the same key at
 * once instead of leaving the agent waiting out the horizon. Only for a run going forward: a stopped or
 * unwinding run reads NOT_EXECUTED as "nothing to undo", which needs proof of absence. And not after a 409,
 * the vendor's "an earlier send under this key is in flight".
 *
 * One reconcile pass in this process (`claimReconcilableSteps`, then `reconcileStep`, as the worker runs
 * them), over a step written by the harness's `unknownStep`, with `create_note` variants whose lookup never
 * finds anything: the fixture tools loaded by a reconciler process do not dedupe by key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { z } from 'zod';
import {
  createLogger,
  createRun,
  createToolRegistry,
  defineTool,
  ref,
  RunStatus,
  StepStatus,
  type ToolRegistry,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { deleteNote } from '../../../test/fixtures/effect-tools.js';
import { eventsOf } from '../../../test/fixtures/dispatcher-processes.js';
import { ReconcileOutcome, type SettleResult } from '../src/index.js';
import {
  mustRead,
  outboxOf as outboxOfIn,
  reconcileOnce as reconcileOnceIn,
  unknownStep,
  type UnsettledStep,
} from './reconciler-harness.js';

/** Why 200 ms: the search lag, far below ATTEMPTED_AGO_MS, so the resend wait has passed at the first pass. */
const LAG_MS = 200;
/** Why 60 s: the commit horizon, far above ATTEMPTED_AGO_MS, so absence cannot be proved in this file. */
const HORIZON_MS = 60_000;
/** Why 5 s: past the lag, within the horizon: only the dedupes-by-key rule can send the step again. */
const ATTEMPTED_AGO_MS = 5_000;
const OWNER = 'resend-test-reconciler';

const looked: string[] = [];

/** `create_note` as the fixtures declare it, with a horizon, and whose lookup never finds the note. */
function unfoundNote(dedupesByKey: boolean) {
  return defineTool({
    name: 'create_note',
    class: 'compensatable',
    version: 1,
    args: z.object({ orderId: z.string().min(1), text: z.string() }),
    compensate: (_args, key) => ({ tool: 'delete_note', args: { note: ref(key), reason: 'rolled back' } }),
    execute: () => Promise.resolve({ externalRef: 'FX-never', result: {} }),
    lookup: (key) => {
      looked.push(key);
      return Promise.resolve(null);
    },
    lookupLagMs: LAG_MS,
    commitHorizonMs: HORIZON_MS,
    timeoutMs: 1_000,
    dedupesByKey,
  });
}
const deduping = createToolRegistry([unfoundNote(true), deleteNote]);
const notDeduping = createToolRegistry([unfoundNote(false), deleteNote]);
const logger = createLogger({ level: 'silent', name: 'resend-under-key-test' });

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('reconcile_resend');
});
afterAll(async () => env?.close());

const reconcileOnce = (s: UnsettledStep, registry: ToolRegistry) =>
  reconcileOnceIn(env, s, { registry, owner: OWNER, logger });
const outboxOf = (key: string) => outboxOfIn(env, key);

/** The step was neither settled nor sent again by the pass: still UNKNOWN, its one dispatch, no NOT_EXECUTED. */
async function expectLeftUnknown(s: UnsettledStep, r: SettleResult): Promise<void> {
  expect(r).toMatchObject({ outcome: ReconcileOutcome.AWAITING_LAG, status: StepStatus.UNKNOWN });
  expect(r.redispatchNo).toBeUndefined();
  expect((await mustRead(env, s.key)).status).toBe(StepStatus.UNKNOWN);
  expect(await outboxOf(s.key)).toHaveLength(1);
  const events = await eventsOf(env.db, s.runId, s.stepIdx);
  expect(events.filter((e) => e.to_status === StepStatus.NOT_EXECUTED)).toEqual([]);
  // It was looked up once: the pass did decide, it did not skip the step.
  expect(looked.filter((k) => k === s.key)).toHaveLength(1);
}

describe('a "not found" past the lag, within the horizon', () => {
  it('sends the step again under its key when the vendor dedupes by key', async () => {
    const s = await unknownStep(env, 'resend-dedupes', { attemptedAgoMs: ATTEMPTED_AGO_MS });
    const r = await reconcileOnce(s, deduping);
    expect(r).toMatchObject({
      outcome: ReconcileOutcome.NOT_EXECUTED,
      status: StepStatus.INTENDED,
      redispatchNo: 2,
    });

    const after = await mustRead(env, s.key);
    expect(after.status).toBe(StepStatus.INTENDED);
    expect(after.idempotency_key).toBe(s.key);
    const outbox = await outboxOf(s.key);
    expect(outbox).toHaveLength(2);
    expect(new Set(outbox.map((o) => o.job_id)).size).toBe(2);
    expect(looked.filter((k) => k === s.key)).toHaveLength(1);

    const events = await eventsOf(env.db, s.runId, s.stepIdx);
    const path = events.filter((e) => e.to_status !== null).map((e) => [e.from_status, e.to_status]);
    expect(path.slice(-2)).toEqual([
      [StepStatus.UNKNOWN, StepStatus.NOT_EXECUTED],
      [StepStatus.NOT_EXECUTED, StepStatus.INTENDED],
    ]);
    const notExecuted = events.find((e) => e.to_status === StepStatus.NOT_EXECUTED)!;
    expect(notExecuted.cause).toMatch(/dedupes by key/);
  });

  it('leaves the step UNKNOWN, not sent again, when the vendor does not dedupe by key', async () => {
    const s = await unknownStep(env, 'resend-no-dedupe', { attemptedAgoMs: ATTEMPTED_AGO_MS });
    await expectLeftUnknown(s, await reconcileOnce(s, notDeduping));
  });

  it('leaves it UNKNOWN when the stored error is a 409: an earlier send under the key is in flight', async () => {
    const s = await unknownStep(env, 'resend-409', { attemptedAgoMs: ATTEMPTED_AGO_MS });
    const error = JSON.stringify({ code: 'UPSTREAM_4XX', status: 409, message: 'request in progress' });
    await sql`UPDATE saga_log SET error = ${error}::jsonb WHERE idempotency_key = ${s.key}`.execute(env.db);
    await expectLeftUnknown(s, await reconcileOnce(s, deduping));
  });

  it('leaves it UNKNOWN, not NOT_EXECUTED, for a run that is compensating', async () => {
    const s = await unknownStep(env, 'resend-compensating', { attemptedAgoMs: ATTEMPTED_AGO_MS });
    await env.db
      .updateTable('runs')
      .set({ status: RunStatus.COMPENSATING })
      .where('run_id', '=', s.runId)
      .execute();
    await expectLeftUnknown(s, await reconcileOnce(s, deduping));
  });

  it('leaves it UNKNOWN for a run whose authority can lapse (authorityTtlMs)', async () => {
    await createRun(env.db, {
      runId: 'resend-ttl',
      tenantId: 'acme',
      metadata: {},
      policy: { authorityTtlMs: 3_600_000 },
    });
    const s = await unknownStep(env, 'resend-ttl', { attemptedAgoMs: ATTEMPTED_AGO_MS });
    // The harness's own createRun found the run taken: the policy above is the run's.
    const run = await env.db
      .selectFrom('runs')
      .select('policy')
      .where('run_id', '=', s.runId)
      .executeTakeFirst();
    expect(run?.policy).toMatchObject({ authorityTtlMs: 3_600_000 });
    await expectLeftUnknown(s, await reconcileOnce(s, deduping));
  });
});
