/**
 * Which INTENDED steps under a live lease the reconciler's sweep takes (`claimReconcilableSteps` with
 * core's `leaseHolderGone`), on real Postgres: one whose holder proved liveness (`holdWorkerLiveness`)
 * and whose session has ended (a killed process: here its backend terminated, or the session stopped) is
 * due at once; one whose holder still holds its session is not; one under a plain owner id, which proves
 * nothing, waits for its lease's time whatever sessions exist; and a lock held in another schema vouches
 * for nobody here.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { claimStep, holdWorkerLiveness, StepStatus, type WorkerLiveness } from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { createIntent } from '../../../test/fixtures/dispatcher-processes.js';
import { claimReconcilableSteps } from '../src/sql/claim-reconcilable-steps.js';

let env: TestEnv;
const held: WorkerLiveness[] = [];
const APP = `liveness${process.pid}`;
/** Why 10 min: a lease no test outlives, so only a holder's death can make the step due. */
const LONG_LEASE_MS = 600_000;

beforeAll(async () => {
  env = await createTestEnv('rec_liveness');
});
afterEach(async () => {
  await Promise.all(held.splice(0).map((l) => l.stop()));
});
afterAll(async () => env?.close());

const hold = async (name: string, schema = env.schema) => {
  const l = await holdWorkerLiveness(schema, {
    db: { url: env.databaseUrl, schema, applicationName: `${APP}-${name}` },
  });
  held.push(l);
  return l;
};

/** An INTENDED step claimed by `worker` under a lease of {@link LONG_LEASE_MS}. */
async function leasedStep(runId: string, worker: string): Promise<string> {
  const row = await createIntent(env, {
    runId,
    stepIdx: 0,
    tool: 'create_note',
    args: { orderId: runId, text: 'held' },
    unrelayed: true,
  });
  const claim = await claimStep(env.db, {
    runId,
    stepIdx: 0,
    key: row.idempotency_key,
    worker,
    leaseMs: LONG_LEASE_MS,
    jobId: row.idempotency_key,
    schema: env.schema,
  });
  expect(claim.kind).toBe('claimed');
  return row.idempotency_key;
}

const due = async (key: string) =>
  (
    await claimReconcilableSteps(env.db, {
      owner: 'liveness-test',
      leaseMs: 1_000,
      limit: 1,
      key,
      schema: env.schema,
    })
  ).map((r) => r.status);

const terminate = async (name: string) =>
  (
    await sql<{ n: number }>`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
       WHERE application_name = ${`${APP}-${name}-liveness`}`.execute(env.db)
  ).rows[0]!.n;

describe("a lease whose holder's session is gone has lapsed", () => {
  it('is not due while the holder lives, and due at once when its session is killed', async () => {
    const live = await hold('killed');
    expect(live.workerId).toMatch(/\+live$/);
    const key = await leasedStep('liveness-killed', live.workerId);
    expect(await due(key)).toEqual([]);

    expect(await terminate('killed')).toBe(1);
    await expect.poll(() => due(key), { timeout: 5_000, interval: 50 }).toEqual([StepStatus.INTENDED]);
  });

  it('is due once the holder stops its session (a drained process)', async () => {
    const live = await hold('stopped');
    const key = await leasedStep('liveness-stopped', live.workerId);
    expect(await due(key)).toEqual([]);
    await live.stop();
    expect(await due(key)).toEqual([StepStatus.INTENDED]);
  });

  it("a plain owner id proves nothing: its step waits for the lease's time", async () => {
    const key = await leasedStep('liveness-plain', 'host:1:abcdef');
    expect(await due(key)).toEqual([]);
  });

  it('a lock of the same worker id in another schema vouches for nobody here', async () => {
    const elsewhere = await hold('elsewhere', `${env.schema}_other`);
    const key = await leasedStep('liveness-elsewhere', elsewhere.workerId);
    expect(await due(key)).toEqual([StepStatus.INTENDED]);
  });
});
