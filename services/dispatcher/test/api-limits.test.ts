/**
 * The API's limits (issue 14): the cap on steps per run (explicit `stepIdx`, `dependsOn`, the run cursor,
 * and `recordCallerIntent`), keyset pages of a run's steps and events (and the client following them), the
 * per-token rate limit, and the HTTP timeouts from config. Two APIs in process: one with the defaults, one
 * whose tokens may send 3 requests a minute.
 */
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiToken,
  createToolRegistry,
  recordCallerIntent,
  BadRequestError,
  SagaError,
  STANDARD_EVENT_COLUMNS,
} from '@agent-saga/core';
import { createSagaClient, RateLimitedError } from '@agent-saga/client';
import { call, countRows, newRun, request, startApiHarness, type ApiHarness } from './api-harness.js';

let h: ApiHarness;
let limited: ApiHarness;
const CAP = 1_000; // SAGA_MAX_STEPS_PER_RUN's default, which the harness keeps
const comment = (stepIdx?: number) => ({
  tool: 'add_comment',
  args: { orderId: 'o-1', text: 'hello' },
  ...(stepIdx === undefined ? {} : { stepIdx }),
});

beforeAll(async () => {
  [h, limited] = await Promise.all([
    startApiHarness('api_limits'),
    startApiHarness('api_limits_rate', { SAGA_RATE_LIMIT_PER_MINUTE: '3' }),
  ]);
}, 30_000);
afterAll(async () => {
  await Promise.all([h?.close(), limited?.close()]);
});

describe('the cap on steps per run', () => {
  it('takes the last index under the cap and refuses the cap, naming stepIdx and writing nothing', async () => {
    await newRun(h, 'cap-explicit');
    expect((await call(h, 'cap-explicit', comment(CAP - 1))).status).toBe(202);
    const over = await call(h, 'cap-explicit', comment(CAP));
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'stepIdx' });
    expect(await countRows(h, 'saga_log', 'cap-explicit')).toBe(1);
    expect(await countRows(h, 'outbox', 'cap-explicit')).toBe(1);
  });

  it('answers an int4-sized stepIdx or dependsOn entry 400, not 500', async () => {
    await newRun(h, 'cap-int4');
    for (const body of [
      comment(2 ** 31),
      comment(Number.MAX_SAFE_INTEGER),
      { ...comment(1), dependsOn: [2 ** 31] },
    ]) {
      const r = await call(h, 'cap-int4', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error?.field).toMatch(/^(stepIdx|dependsOn\.0)$/);
    }
    expect(await countRows(h, 'saga_log', 'cap-int4')).toBe(0);
  });

  it('refuses a new step at a cursor at the cap with 409 STEP_LIMIT, writing nothing', async () => {
    await newRun(h, 'cap-cursor');
    // The cursor of a run that has delivered its last allowed step (its floor; nothing is delivered there).
    await sql`UPDATE runs SET cursor_floor = ${CAP} WHERE run_id = 'cap-cursor'`.execute(h.env.db);
    const full = await call(h, 'cap-cursor', comment());
    expect(full.status).toBe(409);
    expect(full.body.error).toMatchObject({ code: 'STEP_LIMIT', field: 'stepIdx', limit: CAP });
    expect(await countRows(h, 'saga_log', 'cap-cursor')).toBe(0);
    expect(await countRows(h, 'step_events', 'cap-cursor')).toBe(0);
  });

  it('holds recordCallerIntent to its maxStepsPerRun, for an explicit index and for the cursor', async () => {
    await newRun(h, 'cap-caller');
    const registry = createToolRegistry(h.tools);
    const intend = (stepIdx: number | undefined) =>
      h.env.db
        .transaction()
        .execute((trx) =>
          recordCallerIntent(
            trx,
            { tenantId: 't1', runId: 'cap-caller', tool: 'add_comment', args: comment().args, stepIdx },
            { registry, schema: h.env.schema, maxStepsPerRun: 2 },
          ),
        );
    expect((await intend(1)).stepIdx).toBe(1);
    await expect(intend(2)).rejects.toMatchObject({ code: 'BAD_REQUEST', field: 'stepIdx' });
    await expect(intend(2)).rejects.toBeInstanceOf(BadRequestError);
    await sql`UPDATE runs SET cursor_floor = 2 WHERE run_id = 'cap-caller'`.execute(h.env.db);
    const full = await intend(undefined).catch((e: unknown) => e);
    expect(full).toBeInstanceOf(SagaError);
    expect(full).toMatchObject({ code: 'STEP_LIMIT', httpStatus: 409, limit: 2 });
    expect(await countRows(h, 'saga_log', 'cap-caller')).toBe(1);
  });
});

describe('pages of a run', () => {
  const RUN = 'paged';
  beforeAll(async () => {
    await newRun(h, RUN);
    for (let i = 0; i < 12; i++) expect((await call(h, RUN, comment(i))).status).toBe(202);
  });

  it('walks every event once, in order, by nextCursor', async () => {
    const all = await sql<{ id: string }>`
      SELECT id FROM step_events WHERE run_id = ${RUN} ORDER BY id`.execute(h.env.db);
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const q: string = after === null ? '' : `&after=${after}`;
      const r = await request(h, 'GET', `/v1/runs/${RUN}/events?limit=5${q}`);
      expect(r.status).toBe(200);
      const events = r.body.events as { id: string }[];
      expect(events.length).toBeLessThanOrEqual(5);
      seen.push(...events.map((e) => e.id));
      after = r.body.nextCursor as string | null;
      pages++;
    } while (after !== null);
    expect(seen).toEqual(all.rows.map((r) => String(r.id)));
    expect(pages).toBe(Math.ceil(all.rows.length / 5));
  });

  it('pages steps by index and keeps the run view whole without page options', async () => {
    const whole = await request(h, 'GET', `/v1/runs/${RUN}`);
    expect((whole.body.steps as unknown[]).length).toBe(12);
    expect(whole.body.nextStepsCursor).toBeNull();
    const first = await request(h, 'GET', `/v1/runs/${RUN}?stepsLimit=5`);
    expect((first.body.steps as { stepIdx: number }[]).map((s) => s.stepIdx)).toEqual([0, 1, 2, 3, 4]);
    expect(first.body.nextStepsCursor).toBe(4);
    const last = await request(h, 'GET', `/v1/runs/${RUN}?stepsLimit=5&stepsAfter=9`);
    expect((last.body.steps as { stepIdx: number }[]).map((s) => s.stepIdx)).toEqual([10, 11]);
    expect(last.body.nextStepsCursor).toBeNull();
  });

  it('documents the page options and cursors in the OpenAPI schema', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, { get?: { parameters?: { name: string }[] } }>;
    }>();
    const names = (path: string) => doc.paths[path]?.get?.parameters?.map((p) => p.name) ?? [];
    expect(names('/v1/runs/{runId}/events')).toEqual(expect.arrayContaining(['limit', 'after']));
    expect(names('/v1/runs/{runId}')).toEqual(expect.arrayContaining(['stepsLimit', 'stepsAfter']));
    expect(JSON.stringify(doc.paths['/v1/runs/{runId}/events'])).toContain('nextCursor');
  });

  it('refuses a page past its maximum or a malformed cursor with 400 naming the field', async () => {
    const big = await request(h, 'GET', `/v1/runs/${RUN}/events?limit=100000`);
    expect(big.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'limit' });
    const bad = await request(h, 'GET', `/v1/runs/${RUN}/events?after=x`);
    expect(bad.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'after' });
  });

  it("lets the client's getRun and getEvents return everything across pages", async () => {
    // More steps and events than one page holds: copies of step 0 and of its events, written directly (the
    // copies' events as rows of their own: the standard events step 0 holds in its row are not copied).
    const noStoredEvents = Object.fromEntries(
      Object.values(STANDARD_EVENT_COLUMNS)
        .flat()
        .map((c) => [c, null]),
    );
    await sql`
      INSERT INTO saga_log
      SELECT (jsonb_populate_record(NULL::saga_log, to_jsonb(s) || jsonb_build_object(
               'step_idx', g, 'idempotency_key', s.idempotency_key || ':' || g)
               || ${JSON.stringify(noStoredEvents)}::jsonb)).*
        FROM saga_log s, generate_series(12, 1099) g
       WHERE s.run_id = ${RUN} AND s.step_idx = 0`.execute(h.env.db);
    await sql`
      INSERT INTO step_event_rows (run_id, step_idx, kind, from_status, to_status, cause, detail)
      SELECT run_id, g, kind, from_status, to_status, cause, detail
        FROM step_events e, generate_series(12, 1099) g
       WHERE e.run_id = ${RUN} AND e.step_idx = 0`.execute(h.env.db);
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const client = createSagaClient({
      baseUrl: `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`,
      token: h.token.t1,
    });
    const run = await client.getRun(RUN);
    expect(run.steps.map((s) => s.stepIdx)).toEqual(Array.from({ length: 1_100 }, (_, i) => i));
    const events = await client.getEvents(RUN);
    const n = await countRows(h, 'step_events', RUN);
    expect(n).toBeGreaterThan(1_000);
    expect(events.filter((e) => e.stepIdx !== null)).toHaveLength(n);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    // The run handle counts from the whole log.
    const handle = client.run(RUN);
    await handle.sync();
    expect(handle.nextStepIdx).toBe(1_100);
  });
});

describe('the per-token rate limit', () => {
  it('answers a token past its rate 429 with Retry-After, while another token goes on', async () => {
    const token = await createApiToken(limited.env.db, { tenantId: 't1', role: 'agent' });
    for (let i = 0; i < 3; i++)
      expect((await request(limited, 'GET', '/v1/runs', undefined, token)).status).toBe(200);
    const res = await limited.app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: { authorization: `bearer   ${token}` }, // another spelling of the same token: same bucket
      payload: { runId: 'rate-1' },
    });
    expect(res.statusCode).toBe(429);
    const body = res.json<{ error: { code: string; retryAfterMs: number } }>();
    expect(body.error.code).toBe('RATE_LIMITED');
    // 3 a minute: one request comes back every 20 s.
    expect(body.error.retryAfterMs).toBeGreaterThan(15_000);
    expect(body.error.retryAfterMs).toBeLessThanOrEqual(20_000);
    expect(Number(res.headers['retry-after'])).toBe(Math.ceil(body.error.retryAfterMs / 1000));
    expect(
      await limited.env.db.selectFrom('runs').where('run_id', '=', 'rate-1').select('run_id').execute(),
    ).toEqual([]);
    expect((await request(limited, 'GET', '/v1/runs', undefined, limited.token.t2)).status).toBe(200);
    // An unknown token is refused by auth and spends nothing.
    expect((await request(limited, 'GET', '/v1/runs', undefined, 'nope')).status).toBe(401);
  });

  it('gives a run handle its index back after a 429: nothing was recorded', async () => {
    const token = await createApiToken(limited.env.db, { tenantId: 't1', role: 'agent' });
    await limited.app.listen({ port: 0, host: '127.0.0.1' });
    const client = createSagaClient({
      baseUrl: `http://127.0.0.1:${(limited.app.server.address() as AddressInfo).port}`,
      token,
    });
    await client.createRun({ runId: 'rate-handle' }); // 1
    const handle = client.run('rate-handle');
    await handle.call('add_comment', comment().args, { waitMs: 0 }); // 2: the log read, 3: the call
    expect(handle.nextStepIdx).toBe(1);
    const err = await handle.call('add_comment', comment().args, { waitMs: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBeGreaterThan(0);
    expect(handle.nextStepIdx).toBe(1);
    expect(await countRows(limited, 'saga_log', 'rate-handle')).toBe(1);
  });
});

describe('the HTTP timeouts', () => {
  it('come from config: a request must arrive in time, a waiting call is never cut', () => {
    expect(h.app.server.requestTimeout).toBe(h.config.HTTP_REQUEST_TIMEOUT_MS);
    expect(h.app.server.keepAliveTimeout).toBe(h.config.HTTP_KEEP_ALIVE_TIMEOUT_MS);
    expect(h.app.server.timeout).toBe(h.config.HTTP_CONNECTION_TIMEOUT_MS);
    expect(h.config.HTTP_CONNECTION_TIMEOUT_MS).toBeGreaterThan(60_000);
  });
});
