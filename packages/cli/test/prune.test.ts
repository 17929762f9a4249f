import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRun, payloadHash, recordIntent, RunStatus, stepKey, StepStatus } from '@agent-saga/core';
import { backdateStepEvents, createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { runCli } from './run-cli.js';
import { runCliInProcess } from './run-cli-in-process.js';

/**
 * `agent-saga prune` against a real migrated schema: the real executable for the run that deletes, the
 * same program in process for the refusals.
 */
let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('cliprune');
});
afterAll(async () => env?.close());

const dbEnv = () => ({ DATABASE_URL: env.databaseUrl, SAGA_DB_SCHEMA: env.schema });

/** A run with one step (its row, its intake event, its outbox row published), moved to `status`, `days` ago. */
async function oldRun(runId: string, status: RunStatus, days: number): Promise<void> {
  await createRun(env.db, { runId, tenantId: 'acme', metadata: {} });
  const args = { orderId: runId };
  await env.db.transaction().execute((trx) =>
    recordIntent(trx, {
      runId,
      stepIdx: 0,
      tenantId: 'acme',
      tool: 'create_ticket',
      toolClass: 'compensatable',
      toolVersion: 1,
      idempotencyKey: stepKey(runId, 0, 'create_ticket'),
      args,
      payloadHash: payloadHash('create_ticket', args),
      compensation: null,
      correction: null,
      audience: [],
      dependsOn: null,
      status: StepStatus.INTENDED,
      schema: env.schema,
    }),
  );
  const by = sql`${days} * interval '1 day'`;
  await sql`UPDATE runs SET status = ${status}, updated_at = now() - ${by} WHERE run_id = ${runId}`.execute(
    env.db,
  );
  await backdateStepEvents(env.db, runId, by);
  await sql`UPDATE outbox SET published_at = now() - ${by} WHERE run_id = ${runId}`.execute(env.db);
}

const rows = async (table: 'outbox' | 'step_events' | 'saga_log') => {
  const r = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)}`.execute(env.db);
  return r.rows[0]!.n;
};

describe('agent-saga prune', () => {
  it('counts with --dry-run, then deletes; the step rows stay', async () => {
    await oldRun('cli-old', RunStatus.COMPLETED, 40);
    await oldRun('cli-young', RunStatus.COMPLETED, 2);
    await oldRun('cli-running', RunStatus.RUNNING, 40);
    const before = { outbox: await rows('outbox'), events: await rows('step_events') };

    const dry = await runCli(['prune', '--older-than', '30d', '--dry-run', '--json'], dbEnv());
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    const report = JSON.parse(dry.stdout) as Record<string, unknown>;
    // The old completed run: its outbox row; its creation and intake events.
    expect(report).toMatchObject({
      schema: env.schema,
      olderThan: '30d',
      dryRun: true,
      outboxRows: 1,
      stepEvents: 2,
    });
    expect(Date.parse(report.cutoff as string)).toBeLessThan(Date.now() - 29 * 86_400_000);
    expect({ outbox: await rows('outbox'), events: await rows('step_events') }).toEqual(before);

    const run = await runCli(['prune', '--older-than', '30d'], dbEnv());
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.lines).toContain('deleted 1 published outbox rows');
    expect(run.lines).toContain('deleted 2 step events');
    expect(await rows('outbox')).toBe(before.outbox - 1);
    expect(await rows('step_events')).toBe(before.events - 2);
    expect(await rows('saga_log')).toBe(3);

    const again = await runCliInProcess(['prune', '--older-than', '30d', '--json'], dbEnv());
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ outboxRows: 0, stepEvents: 0 });
  });

  it('refuses an age without a unit, naming the option, and deletes nothing', async () => {
    const before = await rows('step_events');
    const r = await runCliInProcess(['prune', '--older-than', '30'], dbEnv());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--older-than: "30" is not an age');
    expect(await rows('step_events')).toBe(before);
  });

  it('needs --older-than and DATABASE_URL', async () => {
    const noAge = await runCliInProcess(['prune'], dbEnv());
    expect(noAge.code).toBe(2);
    expect(noAge.stderr).toContain("required option '--older-than <age>' not specified");
    const noDb = await runCliInProcess(['prune', '--older-than', '30d'], {});
    expect(noDb.code).toBe(2);
    expect(noDb.stderr).toContain('DATABASE_URL');
  });
});
