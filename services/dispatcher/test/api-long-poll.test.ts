import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECHECK_MS } from '../src/api/await-read.js';
import { call, executeStep, newRun, request, startApiHarness, type ApiHarness } from './api-harness.js';

// The reads that wait (`waitMs`): a run read held while its status is one of `whileStatus`, a step read
// held while its outcome is still to come. Each is answered when the log moves, woken by the NOTIFY of the
// run's or the step's change, never by the time running out.

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness('api_long_poll');
});
afterAll(async () => h?.close());

type Answer = Awaited<ReturnType<typeof request>>;

/** Starts a request and reports whether it has been answered yet, and when. */
function pending(url: string, token?: string) {
  const started = Date.now();
  let answeredAt: number | null = null;
  const answer = request(h, 'GET', url, undefined, token).then((a: Answer) => {
    answeredAt = Date.now();
    return a;
  });
  return {
    answer,
    get answered() {
      return answeredAt !== null;
    },
    get tookMs() {
      return (answeredAt ?? Date.now()) - started;
    },
  };
}

/** Answered sooner than this after it was asked: woken by a NOTIFY, not by the first re-read (5 s). */
const WOKEN_MS = RECHECK_MS - 1_000;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('GET /v1/runs/{runId}?waitMs=', () => {
  it('holds the answer while the run is open and answers as soon as it ends', async () => {
    await newRun(h, 'lp-complete');
    const read = pending('/v1/runs/lp-complete?waitMs=20000');
    await pause(400);
    expect(read.answered).toBe(false);
    expect((await request(h, 'POST', '/v1/runs/lp-complete/complete')).status).toBe(200);
    const { status, body } = await read.answer;
    expect(status).toBe(200);
    expect(body).toMatchObject({ runId: 'lp-complete', status: 'COMPLETED', steps: [] });
    // Woken by the run's NOTIFY: not by the 20 s running out, nor by the re-read every RECHECK_MS.
    expect(read.tookMs).toBeLessThan(WOKEN_MS);
  });

  it('waits only through the statuses named in whileStatus', async () => {
    await newRun(h, 'lp-while');
    // RUNNING is not among them: answered at once.
    const atOnce = pending('/v1/runs/lp-while?waitMs=20000&whileStatus=COMPENSATING&whileStatus=COMPLETED');
    const first = await atOnce.answer;
    expect(first.body).toMatchObject({ status: 'RUNNING' });
    expect(atOnce.tookMs).toBeLessThan(WOKEN_MS);

    const read = pending('/v1/runs/lp-while?waitMs=20000&whileStatus=RUNNING');
    await pause(400);
    expect(read.answered).toBe(false);
    expect((await request(h, 'POST', '/v1/runs/lp-while/unwind', { reason: 'test' })).status).toBe(202);
    // RUNNING → COMPENSATING ends the wait (no compensator here: the run stays COMPENSATING).
    expect((await read.answer).body).toMatchObject({ status: 'COMPENSATING' });
    expect(read.tookMs).toBeLessThan(WOKEN_MS);
  });

  it('answers the run as it is once waitMs is up', async () => {
    await newRun(h, 'lp-timeout');
    const read = pending('/v1/runs/lp-timeout?waitMs=600');
    const { status, body } = await read.answer;
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'RUNNING' });
    expect(read.tookMs).toBeGreaterThanOrEqual(590);
  });

  it('refuses a bad waitMs or whileStatus, naming the field, and another tenant’s run', async () => {
    await newRun(h, 'lp-bad');
    const bad = await request(h, 'GET', '/v1/runs/lp-bad?waitMs=20000&whileStatus=DONE');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'BAD_REQUEST' });
    expect(JSON.stringify(bad.body.error)).toContain('whileStatus');
    const long = await request(h, 'GET', '/v1/runs/lp-bad?waitMs=600000');
    expect(long.status).toBe(400);
    expect(JSON.stringify(long.body.error)).toContain('waitMs');
    const other = pending('/v1/runs/lp-bad?waitMs=20000', h.token.t2);
    expect((await other.answer).status).toBe(404);
    expect(other.tookMs).toBeLessThan(WOKEN_MS);
  });
});

describe('GET /v1/runs/{runId}/steps/{stepIdx}?waitMs=', () => {
  it('answers the step as soon as its outcome is recorded, sending nothing itself', async () => {
    await newRun(h, 'lp-step');
    const c = await call(h, 'lp-step', {
      tool: 'create_note',
      args: { orderId: 'o-1', text: 'hi' },
      waitMs: 0,
    });
    expect(c.status).toBe(202);
    const read = pending('/v1/runs/lp-step/steps/0?waitMs=20000');
    await pause(400);
    expect(read.answered).toBe(false);
    const recorded = await executeStep(h, 'lp-step', 0, { to: 'CONFIRMED' });
    const { status, body } = await read.answer;
    expect(status).toBe(200);
    expect(body).toMatchObject({
      stepIdx: 0,
      tool: 'create_note',
      status: 'CONFIRMED',
      externalRef: recorded.external_ref,
      idempotencyKey: recorded.idempotency_key,
    });
    expect(read.tookMs).toBeLessThan(WOKEN_MS);
    // The one effect is the executor's: the read sent nothing.
    const effects = await sql<{ n: string }>`
      SELECT count(*) AS n FROM fixture_effects WHERE key = ${recorded.idempotency_key}`.execute(h.raw);
    expect(Number(effects.rows[0]!.n)).toBe(1);
  });

  it('waits through UNKNOWN, and answers when the run stops going forward', async () => {
    await newRun(h, 'lp-unknown');
    await call(h, 'lp-unknown', { tool: 'create_note', args: { orderId: 'o-2', text: 'x' }, waitMs: 0 });
    await executeStep(h, 'lp-unknown', 0, { to: 'UNKNOWN', effect: false });
    const read = pending('/v1/runs/lp-unknown/steps/0?waitMs=20000');
    await pause(400);
    expect(read.answered).toBe(false);
    expect((await request(h, 'POST', '/v1/runs/lp-unknown/unwind', { reason: 'give up' })).status).toBe(202);
    expect((await read.answer).body).toMatchObject({ stepIdx: 0, status: 'UNKNOWN' });
    expect(read.tookMs).toBeLessThan(WOKEN_MS);
  });

  it("shows the step's own decision, not another step's", async () => {
    await newRun(h, 'lp-decision');
    const decision = { model: 'm-1', turnId: 't-7' };
    const first = { tool: 'create_note', args: { orderId: 'o-4', text: 'a' }, waitMs: 0, decision };
    expect((await request(h, 'POST', '/v1/runs/lp-decision/calls', first)).status).toBe(202);
    // A new step only once step 0 is settled (the index does not advance past an open step).
    await executeStep(h, 'lp-decision', 0, { to: 'CONFIRMED' });
    const second = { tool: 'create_note', args: { orderId: 'o-5', text: 'b' }, stepIdx: 1, waitMs: 0 };
    expect((await request(h, 'POST', '/v1/runs/lp-decision/calls', second)).status).toBe(202);
    expect((await request(h, 'GET', '/v1/runs/lp-decision/steps/0')).body).toMatchObject({ decision });
    expect((await request(h, 'GET', '/v1/runs/lp-decision/steps/1')).body).toMatchObject({ decision: null });
  });

  it('answers a settled step at once, and 404 for a step or a run it cannot see', async () => {
    await newRun(h, 'lp-settled');
    await call(h, 'lp-settled', { tool: 'create_note', args: { orderId: 'o-3', text: 'x' }, waitMs: 0 });
    await executeStep(h, 'lp-settled', 0, { to: 'FAILED' });
    const read = pending('/v1/runs/lp-settled/steps/0?waitMs=20000');
    expect((await read.answer).body).toMatchObject({ status: 'FAILED' });
    expect(read.tookMs).toBeLessThan(WOKEN_MS);
    const absent = await request(h, 'GET', '/v1/runs/lp-settled/steps/1?waitMs=20000');
    expect(absent.status).toBe(404);
    expect(absent.body.error).toMatchObject({ code: 'NOT_FOUND' });
    expect((await request(h, 'GET', '/v1/runs/lp-settled/steps/0', undefined, h.token.t2)).status).toBe(404);
    const bad = await request(h, 'GET', '/v1/runs/lp-settled/steps/x');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error)).toContain('stepIdx');
  });
});
