/**
 * Traces across the real processes (issue 14): the api, the relay, an executor and the compensator as child
 * processes loading the real connectors, against the vendor sandbox (which records each request's
 * `traceparent`). A reship sent with a `traceparent` reaches the shipping API in the caller's trace, and so
 * does its compensation (the cancel) when the run is unwound: the trace id travels through the saga log, the
 * outbox, the job and the compensator, not through any one process's memory. No exporter is configured, so
 * no OpenTelemetry SDK runs: the ids are the harness's own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTraceparent } from '@agent-saga/core';
import { startSupportHarness, type SupportHarness } from './fixtures/support-harness.js';

const TRACE_ID = '5a1c0de5a1c0de5a1c0de5a1c0de5a1c';
const TRACEPARENT = `00-${TRACE_ID}-1111222233334444-01`;
const RESHIP = { orderId: '1183', items: [{ sku: 'TEE-L', quantity: 1 }], reason: 'lost in transit' };

let h: SupportHarness;

beforeAll(async () => {
  h = await startSupportHarness('traces_procs', ['relay', 'executor', 'compensator']);
}, 90_000);
afterAll(() => h?.close());

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${h.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('one trace across the processes', () => {
  it('the forward call and its compensation reach the vendor in the caller trace', async () => {
    expect((await post('/v1/runs', { runId: 'traced-procs' })).status).toBe(201);
    const call = await post(
      '/v1/runs/traced-procs/calls',
      { tool: 'reship', args: RESHIP, stepIdx: 0, waitMs: 10_000 },
      { traceparent: TRACEPARENT },
    );
    expect(call.body).toMatchObject({ status: 'CONFIRMED' });
    const run = await h.saga.getRun('traced-procs');
    expect(run.steps[0]?.traceId).toBe(TRACE_ID);

    expect(await h.saga.unwind('traced-procs', 'customer cancelled')).toMatchObject({
      status: 'COMPENSATING',
    });
    expect((await h.terminal('traced-procs')).status).toBe('COMPENSATED');

    const shipping = h.sandbox.admin.requests().filter((q) => q.vendor === 'shipping');
    const reship = shipping.filter((q) => q.method === 'POST' && q.path === '/v1/shipments');
    const cancel = shipping.filter((q) => q.method === 'POST' && q.path.endsWith('/cancel'));
    expect(reship).toHaveLength(1);
    expect(cancel).toHaveLength(1);
    const sent = [reship[0]!, cancel[0]!].map((q) => parseTraceparent(q.traceparent));
    expect(sent.map((t) => t?.traceId)).toEqual([TRACE_ID, TRACE_ID]);
    // Each is a span of its own (the executor's, the compensator's), not the caller's span.
    expect(new Set(sent.map((t) => t?.spanId)).size).toBe(2);
    expect(sent.map((t) => t?.spanId)).not.toContain('1111222233334444');
  });
});
