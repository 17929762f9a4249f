import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compensationKey, stepKey, transitionStep } from '@agent-saga/core';
import { countEffects } from '../../../test/fixtures/effect-tools.js';
import {
  call,
  countRows,
  executeStep,
  newRun,
  request,
  startApiHarness,
  stepAt,
  type ApiHarness,
} from './api-harness.js';

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness('api_calls');
});
afterAll(async () => h?.close());

const note = (orderId: string, text = 'customer asked for a refund') => ({
  tool: 'create_note',
  args: { orderId, text },
});

describe('pure calls and bad input', () => {
  it('runs a pure tool at once and writes no row', async () => {
    await newRun(h, 'pure');
    const r = await call(h, 'pure', { tool: 'echo', args: { text: 'hi' } });
    expect(r).toEqual({ status: 200, body: { status: 'PURE', result: { echoed: 'hi' } } });
    expect(await countRows(h, 'saga_log', 'pure')).toBe(0);
  });

  it('answers 400 naming the field, and writes nothing', async () => {
    await newRun(h, 'bad');
    const unknownTool = await call(h, 'bad', { tool: 'launch_rocket', args: {} });
    expect(unknownTool.status).toBe(400);
    expect(unknownTool.body.error).toMatchObject({ code: 'UNKNOWN_TOOL', field: 'tool' });

    const badArgs = await call(h, 'bad', { tool: 'create_note', args: { text: 'no order' } });
    expect(badArgs.status).toBe(400);
    expect(badArgs.body.error).toMatchObject({ code: 'INVALID_ARGS', field: 'args.orderId' });

    const badIdx = await request(h, 'POST', '/v1/runs/bad/calls', { ...note('o1'), stepIdx: -1 });
    expect(badIdx.status).toBe(400);
    expect(badIdx.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'stepIdx' });

    const noTool = await request(h, 'POST', '/v1/runs/bad/calls', { args: {} });
    expect(noTool.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'tool' });

    const tooLong = await request(h, 'POST', '/v1/runs/bad/calls', { ...note('o1'), waitMs: 60_001 });
    expect(tooLong.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'waitMs' });

    const notJson = await h.app.inject({
      method: 'POST',
      url: '/v1/runs/bad/calls',
      headers: { authorization: `Bearer ${h.token.t1}`, 'content-type': 'application/json' },
      payload: '{"tool": ',
    });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json()).toMatchObject({ error: { code: 'BAD_REQUEST' } });

    for (const t of ['saga_log', 'outbox', 'step_events'] as const)
      expect(await countRows(h, t, 'bad')).toBe(0);
  });

  it('refuses side-effecting calls on a run that is not RUNNING', async () => {
    await newRun(h, 'done');
    await h.env.db.updateTable('runs').set({ status: 'COMPLETED' }).where('run_id', '=', 'done').execute();
    const r = await call(h, 'done', note('o1'));
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: 'RUN_NOT_RUNNING' });
    expect(await countRows(h, 'saga_log', 'done')).toBe(0);
  });
});

describe('intent', () => {
  it('writes the INTENDED row, its compensation, its event and its outbox message together', async () => {
    await newRun(h, 'intent');
    const r = await call(h, 'intent', note('o-1'));
    const key = stepKey('intent', 0, 'create_note');
    expect(r).toEqual({ status: 202, body: { status: 'INTENDED', stepIdx: 0, idempotencyKey: key } });
    const row = await stepAt(h, 'intent', 0);
    expect(row).toMatchObject({
      status: 'INTENDED',
      idempotency_key: key,
      tool: 'create_note',
      audience: ['support_team'],
    });
    expect(row?.compensation).toEqual({
      tool: 'delete_note',
      toolVersion: 1,
      args: { note: { $ref: key }, reason: 'rolled back by run' },
      key: compensationKey('intent', 0, 'create_note'),
    });
    const outbox = await h.env.db.selectFrom('outbox').selectAll().where('run_id', '=', 'intent').execute();
    expect(outbox).toMatchObject([{ job_id: key, idempotency_key: key, published_at: null }]);
    expect(await countRows(h, 'step_events', 'intent')).toBe(1);
  });

  it('leaves no row when the transaction fails after the intent was written', async () => {
    await newRun(h, 'tx-fails');
    await sql`CREATE FUNCTION refuse_outbox() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN RAISE EXCEPTION 'outbox refused by the test'; END $$`.execute(h.env.db);
    await sql`CREATE TRIGGER refuse_outbox BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION refuse_outbox()`.execute(
      h.env.db,
    );
    try {
      const r = await call(h, 'tx-fails', note('o-1'));
      expect(r.status).toBe(500);
      expect(r.body.error).toMatchObject({ code: 'INTERNAL' });
    } finally {
      await sql`DROP TRIGGER refuse_outbox ON outbox`.execute(h.env.db);
    }
    for (const t of ['saga_log', 'outbox', 'step_events'] as const)
      expect(await countRows(h, t, 'tx-fails')).toBe(0);
  });

  it('holds irreversible calls for approval: 202 AWAITING_APPROVAL, no outbox message, again on retry', async () => {
    await newRun(h, 'approve');
    const args = { tool: 'send_notice', args: { to: 'a@example.com', text: 'your refund' } };
    const r = await call(h, 'approve', args);
    const key = stepKey('approve', 0, 'send_notice');
    expect(r).toEqual({
      status: 202,
      body: { status: 'AWAITING_APPROVAL', stepIdx: 0, idempotencyKey: key },
    });
    expect(await countRows(h, 'outbox', 'approve')).toBe(0);
    const again = await call(h, 'approve', args);
    expect(again).toEqual(r);
    expect(await countRows(h, 'outbox', 'approve')).toBe(0);
  });
});

describe('retries', () => {
  it('gives a reworded retry the same key, records it, and never sends the new arguments', async () => {
    await newRun(h, 'reword');
    const first = await call(h, 'reword', note('o-7', 'refund requested'));
    const again = await call(h, 'reword', note('o-7', 'The customer would like their money back'));
    expect(again.status).toBe(202);
    expect(again.body.idempotencyKey).toBe(first.body.idempotencyKey);
    expect(await countRows(h, 'saga_log', 'reword')).toBe(1);
    expect(await countRows(h, 'outbox', 'reword')).toBe(1);
    const row = await stepAt(h, 'reword', 0);
    expect(row?.args).toEqual({ orderId: 'o-7', text: 'refund requested' });
    const retries = await h.env.db
      .selectFrom('step_events')
      .selectAll()
      .where('run_id', '=', 'reword')
      .where('kind', '=', 'retry_call')
      .execute();
    expect(retries).toHaveLength(1);
    expect(retries[0]?.detail).toMatchObject({
      args: { orderId: 'o-7', text: 'The customer would like their money back' },
      reworded: true,
    });

    await executeStep(h, 'reword', 0, { to: 'CONFIRMED' });
    const third = await call(h, 'reword', note('o-7', 'yet another wording'));
    expect(third.body).toMatchObject({ status: 'CONFIRMED', replayed: true });
    expect(await countEffects(h.raw, 'create_note')).toBeGreaterThan(0);
    const effects = await sql<{
      args: unknown;
    }>`SELECT args FROM fixture_effects WHERE key = ${row!.idempotency_key}`.execute(h.env.db);
    expect(effects.rows).toEqual([{ args: { orderId: 'o-7', text: 'refund requested' } }]);
  });

  it('refuses a retry that changes an identity argument: 409 IDEMPOTENCY_MISMATCH naming it, nothing written', async () => {
    await newRun(h, 'identity');
    await call(h, 'identity', note('o-1'));
    const events = await countRows(h, 'step_events', 'identity');
    const r = await call(h, 'identity', note('o-2'));
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({
      code: 'IDEMPOTENCY_MISMATCH',
      fields: ['args.orderId'],
      stepIdx: 0,
    });
    expect(await countRows(h, 'step_events', 'identity')).toBe(events);
  });

  it('replays a CONFIRMED step from the log and calls nothing', async () => {
    await newRun(h, 'replay');
    await call(h, 'replay', note('o-1'));
    await executeStep(h, 'replay', 0, { to: 'CONFIRMED' });
    const effects = await countEffects(h.raw);
    const r = await call(h, 'replay', { ...note('o-1'), stepIdx: 0 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      status: 'CONFIRMED',
      stepIdx: 0,
      idempotencyKey: stepKey('replay', 0, 'create_note'),
      replayed: true,
    });
    expect(r.body.externalRef).toMatch(/^FX-/);
    expect(await countEffects(h.raw)).toBe(effects);
    expect(await countRows(h, 'outbox', 'replay')).toBe(1);
  });

  it('answers a FAILED step with its error', async () => {
    await newRun(h, 'failed');
    await call(h, 'failed', note('o-1'));
    await executeStep(h, 'failed', 0, { to: 'FAILED' });
    const r = await call(h, 'failed', note('o-1'));
    expect(r).toMatchObject({ status: 200, body: { status: 'FAILED', error: { code: 'CLIENT_ERROR' } } });
  });
});

describe('step resolution', () => {
  it('refuses another tool at an explicit index: 409 STEP_CONFLICT', async () => {
    await newRun(h, 'conflict');
    await call(h, 'conflict', { ...note('o-1'), stepIdx: 0 });
    const r = await call(h, 'conflict', {
      tool: 'send_notice',
      args: { to: 'a@b.co', text: 'x' },
      stepIdx: 0,
    });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: 'STEP_CONFLICT', stepIdx: 0, existingTool: 'create_note' });
  });

  it('refuses a new step, or another tool, while an earlier step is UNKNOWN: 409 STEP_UNRESOLVED', async () => {
    await newRun(h, 'unresolved');
    await call(h, 'unresolved', { ...note('o-1'), stepIdx: 0 });
    await executeStep(h, 'unresolved', 0, { to: 'UNKNOWN', effect: false });
    const explicit = await call(h, 'unresolved', { ...note('o-2'), stepIdx: 1 });
    expect(explicit.status).toBe(409);
    expect(explicit.body.error).toMatchObject({ code: 'STEP_UNRESOLVED', stepIdx: 0 });
    const implicit = await call(h, 'unresolved', { tool: 'send_notice', args: { to: 'a@b.co', text: 'x' } });
    expect(implicit.status).toBe(409);
    expect(implicit.body.error).toMatchObject({ code: 'STEP_UNRESOLVED', stepIdx: 0 });
    expect(implicit.body.error?.outcome).toBeUndefined();
    expect(await countRows(h, 'saga_log', 'unresolved')).toBe(1);
  });

  it('moves the cursor only once a response carried the settled outcome', async () => {
    await newRun(h, 'cursor');
    await call(h, 'cursor', note('o-1'));
    await executeStep(h, 'cursor', 0, { to: 'CONFIRMED' });
    expect((await request(h, 'GET', '/v1/runs/cursor')).body.cursor).toBe(0);
    const seen = await call(h, 'cursor', note('o-1'));
    expect(seen.body).toMatchObject({ status: 'CONFIRMED', stepIdx: 0 });
    expect((await request(h, 'GET', '/v1/runs/cursor')).body.cursor).toBe(1);
    const next = await call(h, 'cursor', note('o-2'));
    expect(next.body).toMatchObject({ status: 'INTENDED', stepIdx: 1 });
  });

  it('refuses another tool at a settled step the caller has not seen, carrying its outcome', async () => {
    await newRun(h, 'undelivered');
    await call(h, 'undelivered', note('o-1'));
    await executeStep(h, 'undelivered', 0, { to: 'CONFIRMED' });
    const r = await call(h, 'undelivered', { tool: 'send_notice', args: { to: 'a@b.co', text: 'done' } });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({
      code: 'STEP_UNRESOLVED',
      stepIdx: 0,
      outcome: { status: 'CONFIRMED', stepIdx: 0, tool: 'create_note', replayed: true },
    });
    // The 409 carried the outcome: the cursor moved, and the next call is a new step.
    const next = await call(h, 'undelivered', { tool: 'send_notice', args: { to: 'a@b.co', text: 'done' } });
    expect(next.body).toMatchObject({ status: 'AWAITING_APPROVAL', stepIdx: 1 });
  });
});

describe('waiting for the outcome', () => {
  it('answers as soon as the step settles (NOTIFY), long before waitMs', async () => {
    await newRun(h, 'wait');
    await call(h, 'wait', note('o-1'));
    const started = Date.now();
    const pending = call(h, 'wait', { ...note('o-1'), waitMs: 20_000 });
    await new Promise((r) => setTimeout(r, 300));
    await executeStep(h, 'wait', 0, { to: 'CONFIRMED' });
    const r = await pending;
    const took = Date.now() - started;
    expect(r.body).toMatchObject({ status: 'CONFIRMED', stepIdx: 0, replayed: true });
    expect(took).toBeGreaterThanOrEqual(300);
    expect(took).toBeLessThan(3_000);
  });

  it('answers 202 INTENDED when waitMs passes first, and UNKNOWN with a message for the model', async () => {
    await newRun(h, 'timeout');
    const started = Date.now();
    const r = await call(h, 'timeout', { ...note('o-1'), waitMs: 400 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(r).toMatchObject({ status: 202, body: { status: 'INTENDED', stepIdx: 0 } });
    const pending = call(h, 'timeout', { ...note('o-1'), waitMs: 10_000 });
    await new Promise((res) => setTimeout(res, 200));
    await executeStep(h, 'timeout', 0, { to: 'UNKNOWN', effect: false });
    const unknown = await pending;
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ status: 'UNKNOWN', stepIdx: 0 });
    expect(String(unknown.body.message)).toMatch(/do not call this tool\s+again with new arguments/i);
  });

  it('lists every transition and attempt of a run, camelCase, with secret arguments redacted', async () => {
    await newRun(h, 'events');
    await call(h, 'events', {
      tool: 'create_note',
      args: { orderId: 'o-1', text: 'x', apiToken: 'sk_live_123' },
    });
    await call(h, 'events', {
      tool: 'create_note',
      args: { orderId: 'o-1', text: 'y', apiToken: 'sk_live_123' },
    });
    await h.env.db.transaction().execute((trx) =>
      transitionStep(trx, {
        runId: 'events',
        stepIdx: 0,
        to: 'UNKNOWN',
        cause: 'test',
        schema: h.env.schema,
      }),
    );
    const ev = await request(h, 'GET', '/v1/runs/events/events');
    expect(ev.status).toBe(200);
    const list = ev.body.events as { kind: string; to: string | null; detail: { args?: unknown } }[];
    expect(list.map((e) => [e.kind, e.to])).toEqual([
      ['run_transition', 'RUNNING'],
      ['transition', 'INTENDED'],
      ['retry_call', null],
      ['transition', 'UNKNOWN'],
    ]);
    expect(JSON.stringify(ev.body)).not.toContain('sk_live_123');
    const run = await request(h, 'GET', '/v1/runs/events');
    const [step] = run.body.steps as Record<string, unknown>[];
    expect(step).toMatchObject({
      stepIdx: 0,
      tool: 'create_note',
      toolClass: 'compensatable',
      status: 'UNKNOWN',
      args: { orderId: 'o-1', text: 'x', apiToken: '[REDACTED]' },
      externalRef: null,
      compensationStatus: null,
      audience: ['support_team'],
      attempts: 0,
    });
    expect(Object.keys(step!)).toEqual(
      expect.arrayContaining(['idempotencyKey', 'result', 'error', 'compensation', 'createdAt', 'updatedAt']),
    );
  });
});
