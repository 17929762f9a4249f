import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, StepStatus, stepKey, transitionStep } from '@agent-saga/core';
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

/**
 * No replanned duplicates: a NEW step whose tool and identity values equal those of an earlier step of the
 * run that may have taken effect is refused 409 DUPLICATE_OPERATION, writing nothing, through the intake
 * transaction (fast path off: `tx`) and through the grouped intake (fast path on, `stepIdx` given:
 * `grouped`, whose statement writes nothing for such an item and hands it to the transaction).
 */
let tx: ApiHarness;
let grouped: ApiHarness;
let op: string;
beforeAll(async () => {
  tx = await startApiHarness('api_dup_tx');
  grouped = await startApiHarness('api_dup_grouped', { SAGA_FAST_PATH: 'true' });
  op = await createApiToken(tx.env.db, { tenantId: 't1', role: 'operator', label: 'alice' });
});
afterAll(async () => {
  await tx?.close();
  await grouped?.close();
});

/** `create_note` stands for `create_ticket`: compensatable, identity `orderId`, not repeatable. */
const ticket = (orderId: string, text = 'customer asked for a refund') => ({
  tool: 'create_note',
  args: { orderId, text },
});
const notice = (text: string) => ({ tool: 'send_notice', args: { to: 'bo@example.com', text } });

/** Everything the run has written: steps, their events, outbox messages, approvals, effects. */
async function footprint(h: ApiHarness, runId: string) {
  const approvals = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM approvals WHERE run_id = ${runId}`.execute(h.env.db);
  return {
    steps: await countRows(h, 'saga_log', runId),
    events: await countRows(h, 'step_events', runId),
    outbox: await countRows(h, 'outbox', runId),
    approvals: approvals.rows[0]!.n,
  };
}

describe.each([
  ['the intake transaction', () => tx],
  ['the grouped intake', () => grouped],
] as const)('a replanned duplicate, through %s', (_form, harness) => {
  it('refuses a second create_ticket for the same order at the next index, naming the earlier step', async () => {
    const h = harness();
    await newRun(h, 'dup-next');
    const first = await call(h, 'dup-next', { ...ticket('1182'), stepIdx: 0 });
    expect(first.status).toBe(202);
    const confirmed = await executeStep(h, 'dup-next', 0, { to: 'CONFIRMED' });
    const before = await footprint(h, 'dup-next');
    const effects = await countEffects(h.raw, 'create_note');

    const again = await call(h, 'dup-next', { ...ticket('1182', 'Order #1182: refund'), stepIdx: 1 });
    expect(again.status).toBe(409);
    expect(again.body.error).toEqual({
      code: 'DUPLICATE_OPERATION',
      message: expect.stringContaining('step 0') as unknown,
      stepIdx: 0,
      status: 'CONFIRMED',
      tool: 'create_note',
      idempotencyKey: stepKey('dup-next', 0, 'create_note'),
      // Reworded: the same operation (its identity, orderId), not the same call sent again.
      sameArgs: false,
      externalRef: confirmed.external_ref,
      result: confirmed.result,
    });
    expect(await footprint(h, 'dup-next')).toEqual(before);
    expect(await stepAt(h, 'dup-next', 1)).toBeUndefined();
    expect(await countEffects(h.raw, 'create_note')).toBe(effects);

    // Refused on every try, at any later index.
    const later = await call(h, 'dup-next', { ...ticket('1182'), stepIdx: 5 });
    // Exactly the earlier step's arguments (keys in another order compare equal): a re-issue.
    expect(later.body.error).toMatchObject({ code: 'DUPLICATE_OPERATION', stepIdx: 0, sameArgs: true });
    const reordered = await call(h, 'dup-next', {
      tool: 'create_note',
      args: { text: 'customer asked for a refund', orderId: '1182' },
      stepIdx: 6,
    });
    expect(reordered.body.error).toMatchObject({ code: 'DUPLICATE_OPERATION', sameArgs: true });
    expect(await footprint(h, 'dup-next')).toEqual(before);
  });

  it('answers a repeat of a step still on its way (INTENDED) STEP_UNRESOLVED naming it, without an outcome', async () => {
    const h = harness();
    await newRun(h, 'dup-inflight');
    await call(h, 'dup-inflight', { ...ticket('7'), stepIdx: 0 });
    const again = await call(h, 'dup-inflight', { ...ticket('7'), stepIdx: 1 });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'STEP_UNRESOLVED', stepIdx: 0 });
    expect(again.body.error?.message).toContain('not known yet (INTENDED)');
    expect(again.body.error).not.toHaveProperty('outcome');
    expect(await countRows(h, 'saga_log', 'dup-inflight')).toBe(1);
  });

  it('a repeat of an UNKNOWN step waits for it: refused as the duplicate once CONFIRMED, written once FAILED', async () => {
    const h = harness();
    for (const [runId, settles] of [
      ['dup-unknown-ok', 'CONFIRMED'],
      ['dup-unknown-failed', 'FAILED'],
    ] as const) {
      await newRun(h, runId);
      await call(h, runId, { ...ticket('55'), stepIdx: 0 });
      await executeStep(h, runId, 0, { to: 'UNKNOWN', effect: settles === 'CONFIRMED' });
      const before = await footprint(h, runId);
      // The charge of seed 20271 #3769: a resumed agent repeats step 0 while its outcome is unknown. Were it
      // told DUPLICATE_OPERATION it would take the effect for done, and lose it when step 0 then failed.
      const early = await call(h, runId, { ...ticket('55'), stepIdx: 1 });
      expect(early.status).toBe(409);
      expect(early.body.error).toMatchObject({ code: 'STEP_UNRESOLVED', stepIdx: 0 });
      expect(early.body.error?.message).toContain('not known yet (UNKNOWN)');
      expect(await footprint(h, runId)).toEqual(before);

      // The reconciler settles step 0: found under its key, or refused under it.
      await h.env.db.transaction().execute((trx) =>
        transitionStep(trx, {
          runId,
          stepIdx: 0,
          to: StepStatus[settles],
          cause: 'test reconciler',
          schema: h.env.schema,
          patch:
            settles === 'CONFIRMED'
              ? { external_ref: 'NOTE-55', result: JSON.stringify({ ok: true }) }
              : { error: JSON.stringify({ code: 'CLIENT_ERROR', message: 'no' }) },
        }),
      );
      const late = await call(h, runId, { ...ticket('55'), stepIdx: 1 });
      if (settles === 'CONFIRMED') {
        expect(late.status).toBe(409);
        expect(late.body.error).toMatchObject({
          code: 'DUPLICATE_OPERATION',
          stepIdx: 0,
          status: 'CONFIRMED',
        });
        expect(await stepAt(h, runId, 1)).toBeUndefined();
      } else {
        expect(late.status).toBe(202);
        expect(late.body).toMatchObject({ status: 'INTENDED', stepIdx: 1 });
      }
    }
  });

  it('lets another order, a repeatable tool and an earlier FAILED or NOT_EXECUTED step through', async () => {
    const h = harness();
    await newRun(h, 'dup-through');
    await call(h, 'dup-through', { ...ticket('1'), stepIdx: 0 });
    await executeStep(h, 'dup-through', 0, { to: 'CONFIRMED' });

    const other = await call(h, 'dup-through', { ...ticket('2'), stepIdx: 1 });
    expect(other.status).toBe(202);
    expect(other.body).toMatchObject({ status: 'INTENDED', stepIdx: 1 });

    // add_comment: create_note's twin declared `repeatable: true`.
    const comment = { tool: 'add_comment', args: { orderId: '1', text: 'called the customer' } };
    expect((await call(h, 'dup-through', { ...comment, stepIdx: 2 })).status).toBe(202);
    await executeStep(h, 'dup-through', 2, { to: 'CONFIRMED' });
    expect((await call(h, 'dup-through', { ...comment, stepIdx: 3 })).body).toMatchObject({ stepIdx: 3 });

    // The system said no: the operation never took effect, so the model may try it again.
    await call(h, 'dup-through', { ...ticket('3'), stepIdx: 4 });
    await executeStep(h, 'dup-through', 4, { to: 'FAILED' });
    expect((await call(h, 'dup-through', { ...ticket('3'), stepIdx: 5 })).body).toMatchObject({
      status: 'INTENDED',
      stepIdx: 5,
    });

    // Proven absent (NOT_EXECUTED): no effect either.
    await call(h, 'dup-through', { ...ticket('4'), stepIdx: 6 });
    await sql`UPDATE saga_log SET status = 'NOT_EXECUTED' WHERE run_id = 'dup-through' AND step_idx = 6`.execute(
      h.env.db,
    );
    expect((await call(h, 'dup-through', { ...ticket('4'), stepIdx: 7 })).body).toMatchObject({
      status: 'INTENDED',
      stepIdx: 7,
    });
    expect(await countRows(h, 'saga_log', 'dup-through')).toBe(8);
  });

  it('compares the whole arguments of a tool without identity fields, held steps included', async () => {
    const h = harness();
    await newRun(h, 'dup-whole');
    // send_notice is irreversible (held for approval) and declares no identity.
    expect(
      (await call(h, 'dup-whole', { ...notice('your refund is on its way'), stepIdx: 0 })).body,
    ).toMatchObject({ status: 'AWAITING_APPROVAL' });
    const before = await footprint(h, 'dup-whole');
    const same = await call(h, 'dup-whole', { ...notice('your refund is on its way'), stepIdx: 1 });
    expect(same.status).toBe(409);
    expect(same.body.error).toMatchObject({
      code: 'DUPLICATE_OPERATION',
      stepIdx: 0,
      status: 'AWAITING_APPROVAL',
    });
    expect(await footprint(h, 'dup-whole')).toEqual(before); // no second approval either
    const reworded = await call(h, 'dup-whole', { ...notice('your refund is on its way!'), stepIdx: 1 });
    expect(reworded.body).toMatchObject({ status: 'AWAITING_APPROVAL', stepIdx: 1 });
  });

  it('refuses a duplicate of a confirmed step as that duplicate, even past an UNKNOWN step', async () => {
    const h = harness();
    await newRun(h, 'dup-past-unknown');
    await call(h, 'dup-past-unknown', { ...ticket('41'), stepIdx: 0 });
    const confirmed = await executeStep(h, 'dup-past-unknown', 0, { to: 'CONFIRMED' });
    await call(h, 'dup-past-unknown', { ...notice('your refund is on its way'), stepIdx: 1 });
    await sql`UPDATE saga_log SET status = 'UNKNOWN' WHERE run_id = 'dup-past-unknown' AND step_idx = 1`.execute(
      h.env.db,
    );
    const before = await footprint(h, 'dup-past-unknown');
    // An agent resuming from a transcript without step 0 calls it again as a new step: it learns step 0's
    // outcome (not "step 1 is unknown"), and nothing is written.
    const again = await call(h, 'dup-past-unknown', { ...ticket('41'), stepIdx: 2 });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      code: 'DUPLICATE_OPERATION',
      stepIdx: 0,
      status: 'CONFIRMED',
      sameArgs: true,
      externalRef: confirmed.external_ref,
    });
    expect(await footprint(h, 'dup-past-unknown')).toEqual(before);
    // Any other new step still waits for the unknown one.
    const other = await call(h, 'dup-past-unknown', { ...ticket('42'), stepIdx: 2 });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'STEP_UNRESOLVED', stepIdx: 1 });
  });

  it('still answers a retry at the same index as before: the outcome, or IDEMPOTENCY_MISMATCH', async () => {
    const h = harness();
    await newRun(h, 'dup-retry');
    await call(h, 'dup-retry', { ...ticket('9'), stepIdx: 0 });
    await executeStep(h, 'dup-retry', 0, { to: 'CONFIRMED' });
    const retry = await call(h, 'dup-retry', { ...ticket('9', 'reworded'), stepIdx: 0 });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ status: 'CONFIRMED', stepIdx: 0, replayed: true });
    const mismatch = await call(h, 'dup-retry', { ...ticket('10'), stepIdx: 0 });
    expect(mismatch.status).toBe(409);
    expect(mismatch.body.error).toMatchObject({ code: 'IDEMPOTENCY_MISMATCH', fields: ['args.orderId'] });
    expect(await countRows(h, 'saga_log', 'dup-retry')).toBe(1);
  });
});

describe('a replanned duplicate without stepIdx', () => {
  it('the same call after the first settled and was seen is refused, and forty of them make one ticket', async () => {
    await newRun(tx, 'dup-cursor');
    expect((await call(tx, 'dup-cursor', ticket('1'))).body).toMatchObject({
      status: 'INTENDED',
      stepIdx: 0,
    });
    await executeStep(tx, 'dup-cursor', 0, { to: 'CONFIRMED' });
    // The cursor is still on step 0: the same call is its retry, and carries the outcome (the cursor moves).
    expect((await call(tx, 'dup-cursor', ticket('1'))).body).toMatchObject({
      status: 'CONFIRMED',
      stepIdx: 0,
      replayed: true,
    });
    const run = await request(tx, 'GET', '/v1/runs/dup-cursor');
    expect(run.body.cursor).toBe(1);

    const effects = await countEffects(tx.raw, 'create_note');
    for (let i = 0; i < 40; i++) {
      const r = await call(tx, 'dup-cursor', ticket('1', `attempt ${i}`));
      expect(r.status).toBe(409);
      expect(r.body.error).toMatchObject({ code: 'DUPLICATE_OPERATION', stepIdx: 0, status: 'CONFIRMED' });
    }
    expect(await countRows(tx, 'saga_log', 'dup-cursor')).toBe(1);
    expect(await countEffects(tx.raw, 'create_note')).toBe(effects);
    // The run goes on with its next step.
    expect((await call(tx, 'dup-cursor', ticket('2'))).body).toMatchObject({
      status: 'INTENDED',
      stepIdx: 1,
    });
  });

  it('an earlier REJECTED step (a person refused it; never sent) does not block the same call', async () => {
    await newRun(tx, 'dup-rejected');
    await call(tx, 'dup-rejected', notice('hi'));
    const [a] = (await request(tx, 'GET', '/v1/approvals?runId=dup-rejected', undefined, op)).body
      .approvals as { id: string; hash: string }[];
    const decided = await request(
      tx,
      'POST',
      `/v1/approvals/${a!.id}/decision`,
      { decision: 'reject', hash: a!.hash },
      op,
    );
    expect(decided.status).toBe(200);
    expect((await call(tx, 'dup-rejected', notice('hi'))).body.status).toBe('REJECTED'); // seen: cursor moves
    const again = await call(tx, 'dup-rejected', notice('hi'));
    expect(again.body).toMatchObject({ status: 'AWAITING_APPROVAL', stepIdx: 1 });
  });
});

describe('concurrent duplicates', () => {
  it('two identical new steps at once through the grouped intake: one is written, the other refused', async () => {
    await newRun(grouped, 'dup-burst');
    const answers = await Promise.all(
      [0, 1].map((i) => call(grouped, 'dup-burst', { ...ticket('77', `turn ${i}`), stepIdx: i })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
    const refused = answers.find((a) => a.status === 409)!;
    const written = answers.find((a) => a.status === 202)!;
    // The written one is still on its way: the other waits for it (STEP_UNRESOLVED naming it).
    expect(refused.body.error).toMatchObject({ code: 'STEP_UNRESOLVED', stepIdx: written.body.stepIdx });
    expect(refused.body.error).not.toHaveProperty('outcome');
    expect(await countRows(grouped, 'saga_log', 'dup-burst')).toBe(1);
  });
});

describe('the OpenAPI document', () => {
  it('lists DUPLICATE_OPERATION among the call route refusals', async () => {
    const res = await tx.app.inject({ method: 'GET', url: '/docs/json' });
    const doc = res.json<{
      paths: Record<
        string,
        { post?: { description?: string; responses: Record<string, { description?: string }> } }
      >;
    }>();
    const route = doc.paths['/v1/runs/{runId}/calls']?.post;
    expect(route?.description).toContain('DUPLICATE_OPERATION');
    expect(route?.responses['409']?.description).toContain('DUPLICATE_OPERATION');
    expect(route?.responses['409']?.description).toContain('IDEMPOTENCY_MISMATCH');
  });
});
