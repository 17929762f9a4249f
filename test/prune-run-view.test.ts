/**
 * What a client sees of a run once retention pruned its journal, through the real API: the run view still
 * answers from the step rows (status, key, attempts), only the decision read from the events becomes null;
 * the events endpoint lists only what was kept; and the agent's repeated call of a pruned run's step gets
 * the same answer as before the prune (a final run takes no call: the refusal is read from the run row).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendStepEvent,
  createApiToken,
  freePort,
  pruneLog,
  RunStatus,
  StepEventKind,
} from '@agent-saga/core';
import { backdateStepEvents, createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import {
  createIntent,
  killAll,
  startRole,
  waitFor,
  type RoleProcess,
} from './fixtures/dispatcher-processes.js';

let env: TestEnv;
let base: string;
let headers: Record<string, string>;
const procs: RoleProcess[] = [];
const RUN = 'pruned-run';
const ARGS = { orderId: 'o-7', text: 'done long ago' };

beforeAll(async () => {
  env = await createTestEnv('prune_view');
  const row = await createIntent(env, {
    runId: RUN,
    stepIdx: 0,
    tool: 'create_note',
    args: ARGS,
    unrelayed: true,
  });
  // The model's decision behind the call, as a retried call records it; then the step confirmed and the run
  // completed, forty days ago.
  await appendStepEvent(env.db, {
    runId: RUN,
    stepIdx: 0,
    kind: StepEventKind.RETRY_CALL,
    cause: 'agent retried the call',
    detail: { decision: { model: 'model-1', turnId: 'turn-9' } },
  });
  await sql`UPDATE saga_log SET status = 'CONFIRMED', attempts = 1, external_ref = 'note-1',
                                result = '{"id":"note-1"}'::jsonb
             WHERE run_id = ${RUN}`.execute(env.db);
  const by = sql`40 * interval '1 day'`;
  await sql`UPDATE runs SET status = ${RunStatus.COMPLETED}, updated_at = now() - ${by} WHERE run_id = ${RUN}`.execute(
    env.db,
  );
  await backdateStepEvents(env.db, RUN, by);
  await sql`UPDATE outbox SET published_at = now() - ${by} WHERE run_id = ${RUN}`.execute(env.db);
  expect(row.run_id).toBe(RUN);

  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  procs.push(startRole(env, 'api', { PORT: String(port) }));
  headers = {
    authorization: `Bearer ${await createApiToken(env.db, { tenantId: 'acme', role: 'agent' })}`,
    'content-type': 'application/json',
  };
  await waitFor('the API', async () =>
    (await fetch(`${base}/healthz`).catch(() => null))?.ok ? true : undefined,
  );
});
afterAll(async () => {
  await killAll(procs);
  await env?.close();
});

interface RunView {
  readonly status: string;
  readonly steps: readonly { stepIdx: number; status: string; idempotencyKey: string; decision?: unknown }[];
}
const view = async () => (await (await fetch(`${base}/v1/runs/${RUN}`, { headers })).json()) as RunView;
const events = async () =>
  ((await (await fetch(`${base}/v1/runs/${RUN}/events`, { headers })).json()) as { events: unknown[] })
    .events;
const replay = async () => {
  const r = await fetch(`${base}/v1/runs/${RUN}/calls`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ tool: 'create_note', args: ARGS, stepIdx: 0, waitMs: 0 }),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};

describe('a run whose journal was pruned', () => {
  it('still answers its run view and its replayed call from the step rows', async () => {
    const before = { view: await view(), events: await events(), replay: await replay() };
    expect(before.view.steps[0]).toMatchObject({ status: 'CONFIRMED', decision: { model: 'model-1' } });
    expect(before.events.length).toBeGreaterThanOrEqual(3);

    const pruned = await pruneLog(env.db, { olderThanMs: 30 * 86_400_000 });
    expect(pruned).toMatchObject({ outboxRows: 1, busy: false });
    expect(pruned.stepEvents).toBe(before.events.length);

    const after = { view: await view(), events: await events(), replay: await replay() };
    expect(after.view.status).toBe(RunStatus.COMPLETED);
    expect(after.view.steps).toHaveLength(1);
    expect(after.view.steps[0]).toMatchObject({
      stepIdx: 0,
      status: 'CONFIRMED',
      idempotencyKey: before.view.steps[0]!.idempotencyKey,
      decision: null,
    });
    expect(after.events).toEqual([]);
    // The agent's repeated call is answered as before: refused, the run being final, nothing sent.
    expect(before.replay).toMatchObject({ status: 409, body: { error: { code: 'RUN_NOT_RUNNING' } } });
    expect(after.replay).toEqual(before.replay);
  });
});
