import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendStepEvent,
  getRun,
  listSteps,
  parseRetentionAge,
  pruneLog,
  PRUNABLE_RUN_STATUSES,
  readStepDecisions,
  RunStatus,
  StepEventKind,
  StepStatus,
  transitionStep,
} from '@agent-saga/core';
import { backdateStepEvents, createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { intendedStep } from './intended-step.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('prunelog');
});
afterAll(async () => env?.close());

const DAY = 86_400_000;

/**
 * A run with one step taken to CONFIRMED (intake event, transition event, a decision event), its outbox row
 * published, the run moved to `status`; with `daysAgo`, every timestamp moved that far into the past.
 */
async function runEndedAs(
  runId: string,
  status: RunStatus,
  o: { daysAgo?: number; published?: boolean } = {},
): Promise<void> {
  const row = await intendedStep(env, runId);
  await appendStepEvent(env.db, {
    runId,
    stepIdx: 0,
    kind: StepEventKind.RETRY_CALL,
    cause: 'agent retried the call',
    detail: { decision: { model: 'm-1', turnId: 't-1' } },
  });
  await env.db.transaction().execute((trx) =>
    transitionStep(trx, {
      runId,
      stepIdx: 0,
      to: StepStatus.CONFIRMED,
      cause: 'test: executed',
      schema: env.schema,
    }),
  );
  if (o.published ?? true)
    await sql`UPDATE outbox SET published_at = now() WHERE run_id = ${runId}`.execute(env.db);
  await sql`UPDATE runs SET status = ${status}, updated_at = now() WHERE run_id = ${runId}`.execute(env.db);
  expect(row.status).toBe(StepStatus.INTENDED);
  if (o.daysAgo) await backdate(runId, o.daysAgo);
}

async function backdate(runId: string, days: number): Promise<void> {
  const by = sql`${days} * interval '1 day'`;
  await sql`UPDATE runs SET updated_at = updated_at - ${by} WHERE run_id = ${runId}`.execute(env.db);
  await backdateStepEvents(env.db, runId, by);
  await sql`UPDATE outbox SET created_at = created_at - ${by},
                              published_at = published_at - ${by} WHERE run_id = ${runId}`.execute(env.db);
}

const count = async (table: 'outbox' | 'step_events' | 'saga_log', runId: string) => {
  const r = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM ${sql.table(table)} WHERE run_id = ${runId}`.execute(env.db);
  return r.rows[0]!.n;
};

describe('pruneLog', () => {
  it('prunes only the terminal statuses no transition leaves', () => {
    expect([...PRUNABLE_RUN_STATUSES].sort()).toEqual(
      [
        RunStatus.COMMITTED_WITH_REPAIR,
        RunStatus.COMPENSATED,
        RunStatus.COMPLETED,
        RunStatus.PARTIALLY_COMPENSATED,
      ].sort(),
    );
  });

  it('reads ages with a unit and refuses anything else, naming the value', () => {
    expect(parseRetentionAge('30d')).toBe(30 * DAY);
    expect(parseRetentionAge('12h')).toBe(12 * 3_600_000);
    expect(parseRetentionAge('2w')).toBe(14 * DAY);
    expect(() => parseRetentionAge('30')).toThrow(/"30" is not an age/);
    expect(() => parseRetentionAge('0d')).toThrow(/"0d" is not an age/);
    expect(() => parseRetentionAge('-1d')).toThrow(/not an age/);
    expect(() => parseRetentionAge('99999w')).toThrow(/longer than ten years/);
  });

  it('deletes old published outbox rows and events of final runs, and nothing else', async () => {
    await runEndedAs('old-completed', RunStatus.COMPLETED, { daysAgo: 40 });
    await runEndedAs('old-compensated', RunStatus.COMPENSATED, { daysAgo: 40 });
    await runEndedAs('old-unpublished', RunStatus.COMPLETED, { daysAgo: 40, published: false });
    await runEndedAs('old-manual', RunStatus.MANUAL_INTERVENTION, { daysAgo: 40 });
    await runEndedAs('old-running', RunStatus.RUNNING, { daysAgo: 40 });
    await runEndedAs('recent-completed', RunStatus.COMPLETED, { daysAgo: 5 });
    // A final run with a decision about it written yesterday: that event is younger than the cutoff.
    await runEndedAs('old-with-late-event', RunStatus.COMPLETED, { daysAgo: 40 });
    await appendStepEvent(env.db, {
      runId: 'old-with-late-event',
      stepIdx: null,
      kind: StepEventKind.DECISION,
      cause: 'operator: correction dismissed',
    });
    // The run's creation, the step's intake, the agent's retry, the transition to CONFIRMED.
    expect(await count('step_events', 'old-completed')).toBe(4);

    const dry = await pruneLog(env.db, { olderThanMs: 30 * DAY, dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, outboxRows: 3, stepEvents: 16, batches: 0 });
    expect(await count('step_events', 'old-completed')).toBe(4);

    const done = await pruneLog(env.db, { olderThanMs: 30 * DAY, batchSize: 2 });
    expect(done).toMatchObject({ dryRun: false, outboxRows: 3, stepEvents: 16, stopped: false });
    expect(done.batches).toBeGreaterThan(4);
    expect(Date.now() - done.cutoff.getTime()).toBeGreaterThanOrEqual(30 * DAY - 60_000);

    for (const runId of ['old-completed', 'old-compensated', 'old-unpublished', 'old-with-late-event']) {
      expect(await count('saga_log', runId), runId).toBe(1);
    }
    expect(await count('step_events', 'old-completed')).toBe(0);
    expect(await count('outbox', 'old-completed')).toBe(0);
    expect(await count('step_events', 'old-compensated')).toBe(0);
    // An unpublished row is a dispatch still owed: kept, though its run's events went.
    expect(await count('outbox', 'old-unpublished')).toBe(1);
    expect(await count('step_events', 'old-unpublished')).toBe(0);
    expect(await count('step_events', 'old-with-late-event')).toBe(1);
    for (const runId of ['old-manual', 'old-running', 'recent-completed']) {
      expect(await count('step_events', runId), runId).toBe(4);
      expect(await count('outbox', runId), runId).toBe(1);
    }

    // Nothing left to prune: a second call finds nothing.
    const again = await pruneLog(env.db, { olderThanMs: 30 * DAY });
    expect(again).toMatchObject({ outboxRows: 0, stepEvents: 0 });
  });

  it('leaves the run view answering from the step rows once the events are gone', async () => {
    const run = await getRun(env.db, 'acme', 'old-completed');
    expect(run.status).toBe(RunStatus.COMPLETED);
    const steps = await listSteps(env.db, 'old-completed');
    expect(steps.map((s) => [s.step_idx, s.status, s.tool])).toEqual([[0, 'CONFIRMED', 'create_ticket']]);
    expect(steps[0]!.idempotency_key).toMatch(/^[0-9a-f]{32}$/);
    // The decision behind a step is read from its events: gone with them (the view shows null).
    expect((await readStepDecisions(env.db, 'old-completed')).size).toBe(0);
    expect((await readStepDecisions(env.db, 'old-running')).size).toBe(1);
  });

  it('stops between batches when its signal is aborted', async () => {
    for (const id of ['abort-a', 'abort-b', 'abort-c'])
      await runEndedAs(id, RunStatus.COMPLETED, { daysAgo: 40 });
    const ac = new AbortController();
    ac.abort();
    const r = await pruneLog(env.db, { olderThanMs: 30 * DAY, batchSize: 1, signal: ac.signal });
    expect(r).toMatchObject({ stopped: true, outboxRows: 0, stepEvents: 0, batches: 0 });
    expect(await count('step_events', 'abort-a')).toBe(4);
  });

  it('runs one prune per schema at a time: the second finds the lock taken and does nothing', async () => {
    await runEndedAs('locked-out', RunStatus.COMPLETED, { daysAgo: 40 });
    // Hold the prune lock on a connection of our own, as a prune under way would.
    const busy = await env.db.connection().execute(async (conn) => {
      await sql`SELECT pg_advisory_lock(hashtext(current_schema() || ':prune-log'))`.execute(conn);
      try {
        return await pruneLog(env.db, { olderThanMs: 30 * DAY });
      } finally {
        await sql`SELECT pg_advisory_unlock(hashtext(current_schema() || ':prune-log'))`.execute(conn);
      }
    });
    expect(busy).toMatchObject({ busy: true, outboxRows: 0, stepEvents: 0 });
    expect(await count('step_events', 'locked-out')).toBe(4);
    const after = await pruneLog(env.db, { olderThanMs: 30 * DAY });
    expect(after.busy).toBe(false);
    expect(await count('step_events', 'locked-out')).toBe(0);
  });

  it('refuses a non-positive age or batch size before touching anything', async () => {
    await expect(pruneLog(env.db, { olderThanMs: 0 })).rejects.toThrow(/olderThanMs must be a positive/);
    await expect(pruneLog(env.db, { olderThanMs: DAY, batchSize: 0 })).rejects.toThrow(/batchSize/);
  });
});
