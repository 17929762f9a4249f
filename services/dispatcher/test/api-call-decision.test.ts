/**
 * The model's decision in the journal, over HTTP: a call's `decision` (model, prompt version, turn,
 * reasoning reference) is kept on the step's intake event, through the grouped intake (the fast path) and
 * the intake transaction alike, and on each retry's RETRY_CALL event; the run view shows the latest per
 * step; a malformed decision is refused naming the field, with nothing written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newRun, request, startApiHarness, type ApiHarness } from './api-harness.js';

let grouped: ApiHarness;
let single: ApiHarness;
beforeAll(async () => {
  [grouped, single] = await Promise.all([
    startApiHarness('api_decision_grouped', { SAGA_FAST_PATH: 'true' }),
    startApiHarness('api_decision_single'),
  ]);
});
afterAll(async () => {
  await Promise.all([grouped?.close(), single?.close()]);
});

const note = (orderId: string) => ({ tool: 'create_note', args: { orderId, text: 'refund asked' } });
const FIRST = {
  model: 'claude-x',
  promptVersion: 'support-v7',
  turnId: 'turn-41',
  reasoningRef: 'trace://41',
};
const SECOND = { model: 'claude-x', turnId: 'turn-42' };

type Event = { stepIdx: number | null; kind: string; cause: string; detail: Record<string, unknown> | null };
async function stepEvents(h: ApiHarness, runId: string, stepIdx: number): Promise<Event[]> {
  const r = await request(h, 'GET', `/v1/runs/${runId}/events`);
  return (r.body.events as Event[]).filter((e) => e.stepIdx === stepIdx);
}
async function stepView(h: ApiHarness, runId: string, stepIdx: number): Promise<Record<string, unknown>> {
  const r = await request(h, 'GET', `/v1/runs/${runId}`);
  return (r.body.steps as Record<string, unknown>[]).find((s) => s.stepIdx === stepIdx)!;
}

describe("a call's decision", () => {
  for (const [form, h] of [
    ['the grouped intake', () => grouped],
    ['the intake transaction', () => single],
  ] as const)
    it(`is kept on the intake event and shown on the step (${form})`, async () => {
      await newRun(h(), 'decided');
      const r = await request(h(), 'POST', '/v1/runs/decided/calls', {
        ...note('o1'),
        stepIdx: 0,
        waitMs: 0,
        decision: FIRST,
      });
      expect([200, 202]).toContain(r.status);
      const [intake] = await stepEvents(h(), 'decided', 0);
      expect(intake).toMatchObject({ cause: 'intake', detail: { args: note('o1').args, decision: FIRST } });
      expect((await stepView(h(), 'decided', 0)).decision).toEqual(FIRST);
    });

  it('a retry keeps its own decision on its RETRY_CALL event; the step shows the latest', async () => {
    const h = single;
    await newRun(h, 'retried');
    await request(h, 'POST', '/v1/runs/retried/calls', {
      ...note('o2'),
      stepIdx: 0,
      waitMs: 0,
      decision: FIRST,
    });
    const retry = await request(h, 'POST', '/v1/runs/retried/calls', {
      ...note('o2'),
      stepIdx: 0,
      waitMs: 0,
      decision: SECOND,
    });
    expect([200, 202]).toContain(retry.status);
    const events = await stepEvents(h, 'retried', 0);
    expect(events.find((e) => e.cause === 'intake')?.detail?.decision).toEqual(FIRST);
    expect(events.find((e) => e.kind === 'retry_call')?.detail?.decision).toEqual(SECOND);
    expect((await stepView(h, 'retried', 0)).decision).toEqual(SECOND);
  });

  it('a call without one stores none and shows null', async () => {
    const h = grouped;
    await newRun(h, 'silent');
    await request(h, 'POST', '/v1/runs/silent/calls', { ...note('o3'), stepIdx: 0, waitMs: 0 });
    const [intake] = await stepEvents(h, 'silent', 0);
    expect(intake?.detail).toEqual({ args: note('o3').args });
    expect((await stepView(h, 'silent', 0)).decision).toBeNull();
  });

  it('an unknown field, a wrong type or an overlong value is refused naming the field; nothing is written', async () => {
    const h = single;
    await newRun(h, 'refused');
    const cases: [unknown, string, string][] = [
      [{ model: 'm', temperature: '0.2' }, 'decision', 'temperature'],
      [{ turnId: 42 }, 'decision.turnId', ''],
      [{ reasoningRef: 'x'.repeat(201) }, 'decision.reasoningRef', ''],
      ['claude', 'decision', ''],
    ];
    for (const [decision, field, named] of cases) {
      const r = await request(h, 'POST', '/v1/runs/refused/calls', { ...note('o4'), stepIdx: 0, decision });
      expect(r.status, JSON.stringify(decision)).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'BAD_REQUEST', field });
      expect(String(r.body.error?.message)).toContain(named);
    }
    for (const t of ['saga_log', 'outbox', 'step_events'] as const)
      expect(await countRows(h, t, 'refused')).toBe(0);
  });
});
