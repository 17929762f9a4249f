/**
 * The reconciler's retention job as a deployment runs it: a real reconciler process with
 * SAGA_PRUNE_OLDER_THAN set and a short SAGA_PRUNE_INTERVAL_MS prunes an old final run's outbox row and
 * events (never its step row, never a live run's), logs the counts, and drains on SIGTERM.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus } from '@agent-saga/core';
import { backdateStepEvents, createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import {
  createIntent,
  killAll,
  waitFor,
  type RoleProcess,
} from '../../../test/fixtures/dispatcher-processes.js';
import { loadReconcilerConfig } from '../src/config.js';
import { startReconciler } from './reconciler-harness.js';

let env: TestEnv;
const procs: RoleProcess[] = [];
beforeAll(async () => {
  env = await createTestEnv('prune_job');
});
afterAll(async () => {
  await killAll(procs);
  await env?.close();
});

/** A one-step run (its outbox row published) moved to `status`, everything `days` in the past. */
async function runEndedDaysAgo(runId: string, status: RunStatus, days: number): Promise<void> {
  await createIntent(env, {
    runId,
    stepIdx: 0,
    tool: 'create_note',
    args: { orderId: runId, text: 'x' },
    unrelayed: true,
  });
  const by = sql`${days} * interval '1 day'`;
  await sql`UPDATE saga_log SET status = 'CONFIRMED' WHERE run_id = ${runId}`.execute(env.db);
  await sql`UPDATE runs SET status = ${status}, updated_at = now() - ${by} WHERE run_id = ${runId}`.execute(
    env.db,
  );
  await backdateStepEvents(env.db, runId, by);
  await sql`UPDATE outbox SET published_at = now() - ${by} WHERE run_id = ${runId}`.execute(env.db);
}

const count = async (table: 'outbox' | 'step_events' | 'saga_log', runId: string) => {
  const r = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM ${sql.table(table)} WHERE run_id = ${runId}`.execute(env.db);
  return r.rows[0]!.n;
};

describe('reconciler retention job', () => {
  it('reads SAGA_PRUNE_OLDER_THAN once, off when unset, and refuses a bare number naming it', () => {
    const base = { DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, SAGA_TOOLS: 'x.js' };
    expect(loadReconcilerConfig(base).SAGA_PRUNE_OLDER_THAN).toBeUndefined();
    expect(loadReconcilerConfig({ ...base, SAGA_PRUNE_OLDER_THAN: '30d' }).SAGA_PRUNE_OLDER_THAN).toBe(
      30 * 86_400_000,
    );
    expect(() => loadReconcilerConfig({ ...base, SAGA_PRUNE_OLDER_THAN: '30' })).toThrow(
      /SAGA_PRUNE_OLDER_THAN: "30" is not an age/,
    );
    expect(() => loadReconcilerConfig({ ...base, SAGA_PRUNE_INTERVAL_MS: '0' })).toThrow(
      /SAGA_PRUNE_INTERVAL_MS/,
    );
  });

  it('prunes on its interval, logs the counts, keeps step rows and live runs', async () => {
    await runEndedDaysAgo('job-old', RunStatus.COMPLETED, 40);
    await runEndedDaysAgo('job-manual', RunStatus.MANUAL_INTERVENTION, 40);
    expect(await count('step_events', 'job-old')).toBe(2);

    const p = startReconciler(env, { SAGA_PRUNE_OLDER_THAN: '30d', SAGA_PRUNE_INTERVAL_MS: '500' });
    procs.push(p);
    const line = await waitFor(
      'the retention log line',
      () =>
        p
          .output()
          .split('\n')
          .find((l) =>
            l.includes('"msg":"retention: pruned published outbox rows and step events of final runs"'),
          ),
      40_000,
    );
    const logged = JSON.parse(line) as { outboxRows: number; stepEvents: number; batches: number };
    expect(logged).toMatchObject({ outboxRows: 1, stepEvents: 2 });
    expect(logged.batches).toBeGreaterThanOrEqual(2);

    expect(await count('outbox', 'job-old')).toBe(0);
    expect(await count('step_events', 'job-old')).toBe(0);
    expect(await count('saga_log', 'job-old')).toBe(1);
    // MANUAL_INTERVENTION may be sent back to RUNNING by an operator: its journal stays.
    expect(await count('step_events', 'job-manual')).toBe(2);
    expect(await count('outbox', 'job-manual')).toBe(1);

    // The started line says retention is on; SIGTERM drains the job with the rest.
    expect(p.output()).toContain('"prune":{"olderThanMs":2592000000,"intervalMs":500}');
    expect(await p.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
