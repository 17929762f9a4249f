import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, newRun, request, startApiHarness, type ApiHarness } from './api-harness.js';

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness('api_runs');
});
afterAll(async () => h?.close());

describe('authentication', () => {
  it('refuses a request without a token, or with an unknown one, with 401 UNAUTHORIZED', async () => {
    const none = await request(h, 'POST', '/v1/runs', {}, null);
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({ code: 'UNAUTHORIZED' });
    const bad = await request(h, 'GET', '/v1/runs/r1', undefined, 'sgt_not-a-token');
    expect(bad.status).toBe(401);
    expect(bad.body.error).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('lets probes and the docs through without a token', async () => {
    expect((await h.app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await h.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({
      status: 'ready',
      checks: { database: { ok: true }, redis: { ok: true } },
    });
    // The metrics are not on this port: the role serves them on its own listener (bin/api.ts).
    expect((await h.app.inject({ url: '/metrics' })).statusCode).toBe(404);
    const metrics = await h.metrics.registry.metrics();
    expect(metrics).toContain('saga_unknown_steps');
    expect(metrics).toContain('saga_outbox_lag_seconds');
    const doc = await h.app.inject({ url: '/docs/json' });
    expect(doc.statusCode).toBe(200);
    const paths = Object.keys(doc.json<{ paths: Record<string, unknown> }>().paths);
    expect(paths).toEqual(expect.arrayContaining(['/v1/runs', '/v1/runs/{runId}', '/v1/runs/{runId}/calls']));
  });

  it('answers 404 for another tenant’s run, on every route', async () => {
    await newRun(h, 'tenant-one-run');
    const read = await request(h, 'GET', '/v1/runs/tenant-one-run', undefined, h.token.t2);
    expect(read.status).toBe(404);
    expect(read.body.error).toMatchObject({ code: 'NOT_FOUND' });
    expect((await request(h, 'GET', '/v1/runs/tenant-one-run/events', undefined, h.token.t2)).status).toBe(
      404,
    );
    const c = await call(
      h,
      'tenant-one-run',
      { tool: 'create_note', args: { orderId: 'o', text: 't' } },
      h.token.t2,
    );
    expect(c.status).toBe(404);
    const pure = await call(h, 'tenant-one-run', { tool: 'echo', args: { text: 'x' } }, h.token.t2);
    expect(pure.status).toBe(404);
    expect(await h.env.db.selectFrom('saga_log').selectAll().execute()).toEqual([]);
  });
});

describe('POST /v1/runs', () => {
  it('creates a run (201), and the same id again is idempotent (200)', async () => {
    const first = await request(h, 'POST', '/v1/runs', { runId: 'run-a', metadata: { agent: 'support' } });
    expect(first).toEqual({ status: 201, body: { runId: 'run-a', status: 'RUNNING' } });
    const again = await request(h, 'POST', '/v1/runs', { runId: 'run-a' });
    expect(again).toEqual({ status: 200, body: { runId: 'run-a', status: 'RUNNING' } });
    const view = await request(h, 'GET', '/v1/runs/run-a');
    expect(view.body).toMatchObject({
      runId: 'run-a',
      status: 'RUNNING',
      cursor: 0,
      steps: [],
      statusReason: null,
    });
  });

  it('generates a run id when none is sent', async () => {
    const r = await request(h, 'POST', '/v1/runs', {});
    expect(r.status).toBe(201);
    expect(r.body.runId).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  });

  it('refuses a malformed run id naming the field, and another tenant’s id without revealing it', async () => {
    const bad = await request(h, 'POST', '/v1/runs', { runId: 'has spaces/and slashes' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'runId' });
    await newRun(h, 'shared-id');
    const taken = await request(h, 'POST', '/v1/runs', { runId: 'shared-id' }, h.token.t2);
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: 'RUN_ID_TAKEN' });
  });
});
