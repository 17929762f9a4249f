/**
 * The deadline sweep the reconciler runs beside its other sweeps (core's `stopOverdueRuns`): it reads only
 * open runs with a deadline, through the partial index `runs_deadline`, most overdue first, and stops each
 * due run once: an unwind when its policy says `unwindOnFailure`, else MANUAL_INTERVENTION with a case.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRun, overdueRunsQuery, stopOverdueRuns, type RunPolicy } from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('deadline_sweep');
});
afterAll(async () => env?.close());

async function runWithDeadline(runId: string, policy: RunPolicy, deadline: string | null) {
  await createRun(env.db, { runId, tenantId: 'acme', metadata: {}, policy });
  if (deadline !== null)
    await env.db
      .updateTable('runs')
      .set({ deadline_at: sql<Date>`now() + ${deadline}::interval` })
      .where('run_id', '=', runId)
      .execute();
}

const statusOf = async (runId: string) =>
  (
    await env.db
      .selectFrom('runs')
      .select(['status', 'status_reason'])
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow()
  ).status;

describe('the deadline sweep', () => {
  it('reads through the runs_deadline partial index', async () => {
    const plan = await env.db.transaction().execute(async (trx) => {
      // Without statistics a tiny table is read whole; forbidding that shows which index can answer.
      await sql`SET LOCAL enable_seqscan = off`.execute(trx);
      const q = overdueRunsQuery(50).compile(trx);
      const r = await sql<{ 'QUERY PLAN': string }>`EXPLAIN ${sql.raw(q.sql.replace('$1', '50'))}`.execute(
        trx,
      );
      return r.rows.map((x) => x['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('runs_deadline');
  });

  it('stops each overdue open run once, by its policy, and leaves the others alone', async () => {
    await runWithDeadline('late-unwind', { unwindOnFailure: true }, '-2 seconds');
    await runWithDeadline('late-person', {}, '-1 second');
    await runWithDeadline('in-time', { unwindOnFailure: true }, '1 hour');
    await runWithDeadline('no-deadline', { unwindOnFailure: true }, null);

    expect(await stopOverdueRuns(env.db, env.schema)).toEqual([
      { runId: 'late-unwind', stop: 'unwound' },
      { runId: 'late-person', stop: 'stopped' },
    ]);
    expect(await statusOf('late-unwind')).toBe('COMPENSATING');
    const unwound = await env.db
      .selectFrom('runs')
      .select('status_reason')
      .where('run_id', '=', 'late-unwind')
      .executeTakeFirstOrThrow();
    expect(unwound.status_reason).toBe('unwind requested: deadline passed');
    expect(await statusOf('late-person')).toBe('MANUAL_INTERVENTION');
    const cases = await env.db.selectFrom('cases').selectAll().where('run_id', '=', 'late-person').execute();
    expect(cases).toEqual([
      expect.objectContaining({
        step_idx: null,
        status: 'open',
        reason: expect.stringContaining('deadline') as unknown,
      }),
    ]);
    expect(await statusOf('in-time')).toBe('RUNNING');
    expect(await statusOf('no-deadline')).toBe('RUNNING');
    // A second sweep finds nothing due: neither stopped run is open any more.
    expect(await stopOverdueRuns(env.db, env.schema)).toEqual([]);
  });
});
