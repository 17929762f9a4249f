/**
 * Input a model or an attacker can send that the API must refuse cleanly: strings Postgres cannot store, a
 * field the tool's schema does not know, an over-long tool name, a made-up tool in the metrics, and a
 * seeded fuzz of the call and run routes. Each refusal is a 400 naming the field, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBoundRunsHarness, type BoundRunsHarness } from './bound-runs-harness.js';

let h: BoundRunsHarness;
beforeAll(async () => {
  h = await startBoundRunsHarness('api_input_hardening');
}, 60_000);
afterAll(async () => h?.close());

const CHARGE = { customerId: 'cus_1', amount: 4900, currency: 'eur', reason: 'Refund order 1182' };
const NOTHING = { steps: 0, outbox: 0, events: 0, approvals: 0 };

async function newRun(): Promise<string> {
  const created = await h.request('POST', '/v1/runs', {});
  expect(created.status).toBe(201);
  return created.body.runId as string;
}

describe('strings Postgres cannot store', () => {
  it.each([
    ['a NUL character', { ...CHARGE, reason: 'refund\u0000now' }, 'args.reason', /NUL character/],
    ['an unpaired surrogate', { ...CHARGE, reason: 'refund \ud800 now' }, 'args.reason', /unpaired/],
    ['a NUL in a field name', { ...CHARGE, 'x\u0000': 1 }, 'args.x\u0000', /its name contains a NUL/],
  ])('in an argument: %s is refused 400 INVALID_ARGS naming the field', async (_, args, field, reason) => {
    const runId = await newRun();
    const res = await h.request('POST', `/v1/runs/${runId}/calls`, { tool: 'charge_card', args, stepIdx: 0 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_ARGS', field });
    expect(String(res.body.error?.message)).toMatch(reason);
    expect(await h.written(runId)).toEqual(NOTHING);
  });

  it('elsewhere (an unwind reason, a run id) is refused 400 BAD_REQUEST naming the field', async () => {
    const runId = await newRun();
    const unwind = await h.request('POST', `/v1/runs/${runId}/unwind`, { reason: 'oops\u0000' });
    expect(unwind.status).toBe(400);
    expect(unwind.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'reason' });
    expect((await h.request('GET', `/v1/runs/${runId}`)).body.status).toBe('RUNNING');
    const byId = await h.request('POST', '/v1/runs', { runId: 'run-\ud83d' });
    expect(byId.status).toBe(400);
    expect(byId.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'runId' });
    const inPath = await h.request('GET', '/v1/runs/run%00x');
    expect(inPath.status).toBe(400);
    expect(inPath.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'runId' });
  });
});

describe('fields the schema does not know', () => {
  it('are refused naming each one and the fields the tool takes, not dropped', async () => {
    const runId = await newRun();
    const res = await h.request('POST', `/v1/runs/${runId}/calls`, {
      tool: 'charge_card',
      args: { ...CHARGE, receipt_email: 'ada@example.com' },
      stepIdx: 0,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'INVALID_ARGS',
      field: 'args.receipt_email',
      issues: [{ field: 'args.receipt_email', message: expect.stringContaining('receiptEmail') as string }],
    });
    expect(await h.written(runId)).toEqual(NOTHING);
    // The same call with the field the schema knows is taken.
    const ok = await h.request('POST', `/v1/runs/${runId}/calls`, {
      tool: 'charge_card',
      args: { ...CHARGE, receiptEmail: 'ada@example.com' },
      stepIdx: 0,
      waitMs: 0,
    });
    expect(ok.status).toBe(202);
    expect((await h.written(runId)).steps).toBe(1);
  });
});

describe('limits', () => {
  it('a tool name over 100 characters is refused before it is looked up', async () => {
    const runId = await newRun();
    const res = await h.request('POST', `/v1/runs/${runId}/calls`, { tool: 'x'.repeat(101), args: {} });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'tool' });
  });

  it('a made-up tool name never becomes a metric label', async () => {
    const runId = await newRun();
    const made = `made_up_tool_${Date.now()}`;
    const res = await h.request('POST', `/v1/runs/${runId}/calls`, { tool: made, args: {} });
    expect(res.status).toBe(400);
    const metrics = await h.metrics.registry.metrics();
    expect(metrics).not.toContain(made);
    expect(metrics).toMatch(/saga_calls_total\{tool="\(unregistered\)",outcome="UNKNOWN_TOOL"\} [1-9]/);
  });
});

describe('a seeded fuzz of the call and run routes', () => {
  /** A small seeded generator (mulberry32), so a failure names the case that reproduces it. */
  function rng(seed: number) {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const PIECES = [
    '',
    'a',
    'ü',
    '\u0000',
    '\ud800',
    '\udfff',
    '😀',
    '\u202e',
    'x'.repeat(300),
    '%00',
    "'; --",
  ];
  const TOOLS = ['charge_card', 'create_ticket', 'send_email', 'get_order', 'nope', ''];
  const FIELDS = [
    'customerId',
    'amount',
    'currency',
    'reason',
    'summary',
    'orderId',
    'to',
    'extra',
    '__proto__',
  ];

  it('answers 300 odd calls with no 5xx, and writes nothing for any it refused', async () => {
    const next = rng(20261201);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const text = () => Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(PIECES)).join('');
    const value = (): unknown => {
      const r = next();
      return r < 0.4
        ? text()
        : r < 0.6
          ? Math.floor(next() * 2 ** 33) - 2 ** 32
          : r < 0.7
            ? null
            : r < 0.8
              ? [text()]
              : { k: text() };
    };
    const failures: string[] = [];
    for (let i = 0; i < 300; i++) {
      const runId = await newRun();
      const args = Object.fromEntries(
        Array.from({ length: Math.floor(next() * 5) }, () => [pick(FIELDS), value()]),
      );
      const body: Record<string, unknown> = { tool: pick(TOOLS), args, waitMs: 0 };
      if (next() < 0.5) body.stepIdx = pick([0, 1, -1, 2 ** 31, 0.5]);
      const res = await h.request('POST', `/v1/runs/${runId}/calls`, body);
      if (res.status >= 500) failures.push(`case ${i}: ${res.status} ${JSON.stringify(body)}`);
      else if (res.status >= 400) {
        const written = await h.written(runId);
        if (written.steps + written.outbox + written.events > 0)
          failures.push(
            `case ${i}: ${res.status} wrote ${JSON.stringify(written)} for ${JSON.stringify(body)}`,
          );
      }
      if (next() < 0.1) {
        const unwind = await h.request('POST', `/v1/runs/${runId}/unwind`, { reason: text() });
        if (unwind.status >= 500) failures.push(`case ${i} unwind: ${unwind.status}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
