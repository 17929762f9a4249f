import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StepStatus, stepKey, transitionStep } from '@agent-saga/core';
import { effectsFor } from '../../../test/fixtures/effect-tools.js';
import {
  call,
  countRows,
  executeStep,
  newRun,
  startApiHarness,
  stepAt,
  type ApiHarness,
} from './api-harness.js';

/**
 * A retry of a step whose outcome nobody recorded asks the tool's lookup first (the inline reconciler), so
 * an effect that exists is confirmed rather than made twice.
 */
let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness('api_lookup');
});
afterAll(async () => h?.close());

const note = (orderId: string) => ({ tool: 'create_note', args: { orderId, text: 'x' } });

async function eventsOf(runId: string, kind: string) {
  return h.env.db
    .selectFrom('step_events')
    .selectAll()
    .where('run_id', '=', runId)
    .where('kind', '=', kind as 'lookup')
    .orderBy('id')
    .execute();
}

describe('retry of an UNKNOWN step', () => {
  it('finds the effect by key and confirms the step, executing nothing again', async () => {
    await newRun(h, 'found');
    await call(h, 'found', note('o-1'));
    // The tool made its effect, then the answer was lost (a 504 after commit).
    await executeStep(h, 'found', 0, { to: 'UNKNOWN', effect: true });
    const key = stepKey('found', 0, 'create_note');
    expect(await effectsFor(h.raw, key)).toHaveLength(1);

    const r = await call(h, 'found', note('o-1'));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'CONFIRMED', stepIdx: 0, idempotencyKey: key, replayed: true });
    expect(r.body.externalRef).toBe(
      (await effectsFor(h.raw, key))[0] && `FX-${(await effectsFor(h.raw, key))[0]!.id}`,
    );
    expect(await effectsFor(h.raw, key)).toHaveLength(1);
    expect(await countRows(h, 'outbox', 'found')).toBe(1);
    expect(await eventsOf('found', 'lookup')).toMatchObject([{ detail: { found: true } }]);
    const step = await stepAt(h, 'found', 0);
    expect(step).toMatchObject({ status: 'CONFIRMED', outcome_delivered: true });
  });

  it('re-dispatches with the same key once a re-checked "not found" is older than horizon + lookupLagMs', async () => {
    await newRun(h, 'absent');
    await call(h, 'absent', note('o-1'));
    // Sent longer ago than create_note's horizon (its timeout, 2 s) plus its lag (0).
    await executeStep(h, 'absent', 0, { to: 'UNKNOWN', effect: false, attemptAgoMs: 5_000 });
    const key = stepKey('absent', 0, 'create_note');

    const r = await call(h, 'absent', note('o-1'));
    expect(r).toMatchObject({ status: 202, body: { status: 'INTENDED', stepIdx: 0, idempotencyKey: key } });
    const outbox = await h.env.db
      .selectFrom('outbox')
      .selectAll()
      .where('run_id', '=', 'absent')
      .orderBy('id')
      .execute();
    expect(outbox.map((o) => o.job_id)).toEqual([key, `${key}-d2`]);
    expect(outbox[1]?.payload).toMatchObject({ dispatchNo: 2, key });
    const transitions = await eventsOf('absent', 'transition');
    expect(transitions.map((e) => e.to_status)).toEqual(['INTENDED', 'UNKNOWN', 'NOT_EXECUTED', 'INTENDED']);
    expect(await eventsOf('absent', 'lookup')).toMatchObject([{ detail: { found: false, believed: true } }]);
    expect(await stepAt(h, 'absent', 0)).toMatchObject({
      status: 'INTENDED',
      lease_until: null,
      lease_owner: null,
    });

    // The re-dispatched attempt runs (same key, stored arguments) and a later retry gets its outcome.
    await executeStep(h, 'absent', 0, { to: 'CONFIRMED' });
    expect(await effectsFor(h.raw, key)).toHaveLength(1);
    const after = await call(h, 'absent', note('o-1'));
    expect(after.body).toMatchObject({ status: 'CONFIRMED', replayed: true });
  });

  it('does not believe a "not found" within the tool’s lookupLagMs of the last attempt: stays UNKNOWN', async () => {
    await newRun(h, 'laggy');
    const laggy = { tool: 'laggy_note', args: { text: 'x' } };
    await call(h, 'laggy', laggy);
    await executeStep(h, 'laggy', 0, { to: 'UNKNOWN', effect: false });

    const r = await call(h, 'laggy', laggy);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'UNKNOWN', stepIdx: 0 });
    expect(await stepAt(h, 'laggy', 0)).toMatchObject({ status: 'UNKNOWN' });
    expect(await countRows(h, 'outbox', 'laggy')).toBe(1);
    expect(await eventsOf('laggy', 'lookup')).toMatchObject([{ detail: { found: false, believed: false } }]);
  });

  it('believes the same "not found" only once the last attempt is older than horizon + lookupLagMs', async () => {
    const laggy = { tool: 'laggy_note', args: { text: 'x' } };
    // Past the lag (60 s) but within the horizon (the 30 s default timeout) after it: not believed yet.
    await newRun(h, 'laggy-horizon');
    await call(h, 'laggy-horizon', laggy);
    await executeStep(h, 'laggy-horizon', 0, { to: 'UNKNOWN', effect: false, attemptAgoMs: 75_000 });
    const early = await call(h, 'laggy-horizon', laggy);
    expect(early.body).toMatchObject({ status: 'UNKNOWN', stepIdx: 0 });
    expect(await countRows(h, 'outbox', 'laggy-horizon')).toBe(1);

    await newRun(h, 'laggy-old');
    await call(h, 'laggy-old', laggy);
    await executeStep(h, 'laggy-old', 0, { to: 'UNKNOWN', effect: false, attemptAgoMs: 91_000 });
    const r = await call(h, 'laggy-old', laggy);
    expect(r).toMatchObject({ status: 202, body: { status: 'INTENDED' } });
    expect(await countRows(h, 'outbox', 'laggy-old')).toBe(2);
  });
});

describe('a retry of an UNKNOWN step waits for its resolution', () => {
  const laggy = { tool: 'laggy_note', args: { text: 'x' } };

  it('up to waitMs, and answers the moment the step is resolved (as the reconciler would, by key)', async () => {
    await newRun(h, 'waits');
    await call(h, 'waits', laggy);
    await executeStep(h, 'waits', 0, { to: 'UNKNOWN', effect: false });
    const started = Date.now();
    const answer = call(h, 'waits', { ...laggy, waitMs: 10_000 });
    // The inline lookup cannot believe "not found" yet (lookupLagMs), so the call waits; then the step is
    // confirmed elsewhere, with its NOTIFY.
    await new Promise((r) => setTimeout(r, 400));
    await h.env.db.transaction().execute((trx) =>
      transitionStep(trx, {
        runId: 'waits',
        stepIdx: 0,
        to: StepStatus.CONFIRMED,
        cause: 'lookup: found',
        patch: { external_ref: 'FX-found-later' },
        schema: h.env.schema,
      }),
    );
    const r = await answer;
    expect(r.body).toMatchObject({ status: 'CONFIRMED', replayed: true, externalRef: 'FX-found-later' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('and answers UNKNOWN once waitMs has passed with the step still unresolved', async () => {
    await newRun(h, 'waits-out');
    await call(h, 'waits-out', laggy);
    await executeStep(h, 'waits-out', 0, { to: 'UNKNOWN', effect: false });
    const started = Date.now();
    const r = await call(h, 'waits-out', { ...laggy, waitMs: 600 });
    expect(r.body).toMatchObject({ status: 'UNKNOWN', stepIdx: 0 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
  });
});

describe('retry of an INTENDED step', () => {
  it('looks up a step whose lease expired (executor died after the effect) and confirms it', async () => {
    await newRun(h, 'crashed');
    await call(h, 'crashed', note('o-1'));
    await executeStep(h, 'crashed', 0, { to: 'crash', effect: true, leaseMs: 1 });
    await new Promise((r) => setTimeout(r, 20));
    const key = stepKey('crashed', 0, 'create_note');
    const r = await call(h, 'crashed', note('o-1'));
    expect(r.body).toMatchObject({ status: 'CONFIRMED', idempotencyKey: key, replayed: true });
    expect(await effectsFor(h.raw, key)).toHaveLength(1);
    const transitions = await eventsOf('crashed', 'transition');
    expect(transitions.map((e) => [e.to_status, e.cause])).toEqual([
      ['INTENDED', 'intake'],
      ['CONFIRMED', 'lookup: found'],
    ]);
  });

  it('moves a lease-expired step to UNKNOWN when a "not found" cannot be believed yet', async () => {
    await newRun(h, 'crashed-early');
    const laggy = { tool: 'laggy_note', args: { text: 'x' } };
    await call(h, 'crashed-early', laggy);
    await executeStep(h, 'crashed-early', 0, { to: 'crash', effect: false, leaseMs: 1 });
    await new Promise((r) => setTimeout(r, 20));
    const r = await call(h, 'crashed-early', laggy);
    expect(r.body).toMatchObject({ status: 'UNKNOWN' });
    expect(await stepAt(h, 'crashed-early', 0)).toMatchObject({ status: 'UNKNOWN', lease_owner: null });
  });

  it('waits on a step whose executor still holds its lease, and does not look it up', async () => {
    await newRun(h, 'held');
    await call(h, 'held', note('o-1'));
    await executeStep(h, 'held', 0, { to: 'crash', effect: false, leaseMs: 30_000 });
    const r = await call(h, 'held', { ...note('o-1'), waitMs: 50 });
    expect(r).toMatchObject({ status: 202, body: { status: 'INTENDED' } });
    expect(await eventsOf('held', 'lookup')).toEqual([]);
  });
});

describe('retry of a NOT_EXECUTED step', () => {
  it('re-dispatches it with the next dispatch number', async () => {
    await newRun(h, 'not-executed');
    await call(h, 'not-executed', note('o-1'));
    await executeStep(h, 'not-executed', 0, { to: 'UNKNOWN', effect: false });
    // The reconciler proved absence.
    await h.env.db
      .updateTable('saga_log')
      .set({ status: 'NOT_EXECUTED' })
      .where('run_id', '=', 'not-executed')
      .execute();
    const r = await call(h, 'not-executed', note('o-1'));
    expect(r).toMatchObject({ status: 202, body: { status: 'INTENDED' } });
    const jobs = await h.env.db
      .selectFrom('outbox')
      .select('job_id')
      .where('run_id', '=', 'not-executed')
      .execute();
    expect(jobs).toHaveLength(2);
  });
});
