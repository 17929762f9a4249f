import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  claimStep,
  claimStepBatch,
  ClientError,
  classifyToolError,
  LATE_OUTCOME_CAUSE,
  recordOutcome,
  runNotRunningCause,
  STEP_ROW_COLUMNS,
  StepStatus,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { intendedStep, stepOfKey } from './intended-step.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('claim');
});
afterAll(async () => env?.close());

const intent = (runId: string) => intendedStep(env, runId);

const claim = async (key: string, worker: string, leaseMs = 10_000) =>
  claimStep(env.db, { ...(await stepOfKey(env, key)), key, worker, leaseMs, jobId: key, schema: env.schema });

const expireLease = (key: string) =>
  sql`UPDATE saga_log SET lease_until = now() - interval '1 second' WHERE idempotency_key = ${key}`.execute(
    env.db,
  );

describe('claimStep', () => {
  it('claims once, marks the outbox row, and refuses a second claimant while the lease is live', async () => {
    const row = await intent('c-1');
    const first = await claim(row.idempotency_key, 'w1');
    expect(first.kind).toBe('claimed');
    if (first.kind === 'claimed') expect(first.row).toMatchObject({ attempts: 1, lease_owner: 'w1' });
    const outbox = await env.db
      .selectFrom('outbox')
      .select('published_at')
      .where('run_id', '=', 'c-1')
      .execute();
    expect(outbox[0]?.published_at).not.toBeNull();
    const second = await claim(row.idempotency_key, 'w2');
    expect(second).toMatchObject({ kind: 'held', leaseOwner: 'w1' });
  });

  it('withdraws, never claims, a step whose run is COMPENSATING or terminal, in both claim paths', async () => {
    const going = await intent('c-run-live');
    for (const [runId, status] of [
      ['c-run-unwound', 'COMPENSATING'],
      ['c-run-done', 'COMPENSATED'],
    ] as const) {
      const row = await intent(runId);
      await sql`UPDATE runs SET status = ${status} WHERE run_id = ${runId}`.execute(env.db);
      // The grouped one-statement claim (the executor's hot path) does not claim it (a RUNNING run's step, below, it does).
      const grouped = await claimStepBatch(
        env.db,
        [{ runId: row.run_id, stepIdx: row.step_idx, key: row.idempotency_key, jobId: row.idempotency_key }],
        {
          worker: 'w1',
          leaseMsByTool: new Map(),
          defaultLeaseMs: 10_000,
        },
      );
      expect(grouped).toEqual([]);
      const c = await claim(row.idempotency_key, 'w1');
      expect(c).toMatchObject({
        kind: 'run-not-running',
        runStatus: status,
        row: { status: 'NOT_EXECUTED' },
      });
      const step = await env.db
        .selectFrom('saga_log')
        .selectAll()
        .where('idempotency_key', '=', row.idempotency_key)
        .executeTakeFirstOrThrow();
      expect(step).toMatchObject({ status: 'NOT_EXECUTED', attempts: 0, lease_owner: null });
      const events = await env.db
        .selectFrom('step_events')
        .select(['kind', 'from_status', 'to_status', 'cause'])
        .where('run_id', '=', runId)
        .where('step_idx', '=', 0)
        .orderBy('id')
        .execute();
      expect(events.map((e) => e.kind)).not.toContain('attempt');
      expect(events.at(-1)).toMatchObject({
        kind: 'transition',
        from_status: 'INTENDED',
        to_status: 'NOT_EXECUTED',
        cause: runNotRunningCause(status),
      });
      // A second delivery finds it settled as never sent.
      expect(await claim(row.idempotency_key, 'w2')).toEqual({
        kind: 'not-intended',
        status: 'NOT_EXECUTED',
      });
    }
    const live = await claimStepBatch(
      env.db,
      [
        {
          runId: going.run_id,
          stepIdx: going.step_idx,
          key: going.idempotency_key,
          jobId: going.idempotency_key,
        },
      ],
      {
        worker: 'w1',
        leaseMsByTool: new Map(),
        defaultLeaseMs: 10_000,
      },
    );
    expect(live.map((r) => r.idempotency_key)).toEqual([going.idempotency_key]);
  });

  it('moves an INTENDED step with an expired lease to UNKNOWN instead of claiming it', async () => {
    const row = await intent('c-2');
    await claim(row.idempotency_key, 'w1');
    await expireLease(row.idempotency_key);
    const again = await claim(row.idempotency_key, 'w2');
    expect(again.kind).toBe('lease-expired');
    if (again.kind === 'lease-expired') expect(again.row).toMatchObject({ status: 'UNKNOWN', attempts: 1 });
    expect(await claim(row.idempotency_key, 'w3')).toEqual({ kind: 'not-intended', status: 'UNKNOWN' });
  });

  it('answers missing for a key with no step, and for a step at that index under another key', async () => {
    const input = { worker: 'w1', leaseMs: 10_000, jobId: 'nope', schema: env.schema };
    expect(await claimStep(env.db, { ...input, runId: 'nope', stepIdx: 0, key: 'nope' })).toEqual({
      kind: 'missing',
    });
    const other = await intent('claim-other-key');
    expect(
      await claimStep(env.db, { ...input, runId: other.run_id, stepIdx: other.step_idx, key: 'not-its-key' }),
    ).toEqual({ kind: 'missing' });
    expect((await claim(other.idempotency_key, 'w1')).kind).toBe('claimed');
  });
});

describe('recordOutcome', () => {
  it('records under the lease and clears it; another owner cannot record', async () => {
    const row = await intent('o-1');
    await claim(row.idempotency_key, 'w1');
    const other = await recordOutcome(
      env.db,
      {
        runId: 'o-1',
        stepIdx: 0,
        leaseOwner: 'w2',
        outcome: { status: StepStatus.CONFIRMED, effect: { externalRef: 'X', result: {} } },
        schema: env.schema,
      },
      row,
    );
    expect(other).toEqual({ kind: 'dropped', status: 'INTENDED' });
    const mine = await recordOutcome(
      env.db,
      {
        runId: 'o-1',
        stepIdx: 0,
        leaseOwner: 'w1',
        outcome: { status: StepStatus.CONFIRMED, effect: { externalRef: 'SUP-1', result: { k: 1 } } },
        schema: env.schema,
      },
      row,
    );
    expect(mine.kind).toBe('recorded');
    if (mine.kind === 'recorded')
      expect(mine.row).toMatchObject({
        status: 'CONFIRMED',
        external_ref: 'SUP-1',
        lease_until: null,
        lease_owner: null,
      });
  });

  it("answers the recorded row as the log holds it: the claimed step with the outcome's changes", async () => {
    const row = await intent('o-whole');
    const claimed = await claim(row.idempotency_key, 'w1');
    if (claimed.kind !== 'claimed') throw new Error(`not claimed: ${claimed.kind}`);
    const outcome = {
      status: StepStatus.CONFIRMED,
      effect: { externalRef: 'SUP-9', result: { id: 9 } },
    } as const;
    const recorded = await recordOutcome(
      env.db,
      { runId: 'o-whole', stepIdx: 0, leaseOwner: 'w1', outcome, schema: env.schema },
      claimed.row,
    );
    if (recorded.kind !== 'recorded') throw new Error(`not recorded: ${recorded.kind}`);
    const stored = await env.db
      .selectFrom('saga_log')
      .select([...STEP_ROW_COLUMNS])
      .where('run_id', '=', 'o-whole')
      .where('step_idx', '=', 0)
      .executeTakeFirstOrThrow();
    // Every column: the ones the outcome changed (status, effect, lease, updated_at) and the ones it kept.
    expect(recorded.row).toEqual(stored);
    expect(recorded.row).toMatchObject({ status: 'CONFIRMED', external_ref: 'SUP-9', lease_owner: null });
  });

  it('records an effect that arrives after lease expiry as UNKNOWN → CONFIRMED (late outcome)', async () => {
    const row = await intent('o-2');
    await claim(row.idempotency_key, 'w1');
    await expireLease(row.idempotency_key);
    await claim(row.idempotency_key, 'w2'); // → UNKNOWN
    const late = await recordOutcome(
      env.db,
      {
        runId: 'o-2',
        stepIdx: 0,
        leaseOwner: 'w1',
        outcome: { status: StepStatus.CONFIRMED, effect: { externalRef: 'SUP-2', result: null } },
        schema: env.schema,
      },
      row,
    );
    expect(late.kind).toBe('late');
    const events = await env.db
      .selectFrom('step_events')
      .selectAll()
      .where('run_id', '=', 'o-2')
      .orderBy('id')
      .execute();
    expect(events.at(-1)).toMatchObject({
      from_status: 'UNKNOWN',
      to_status: 'CONFIRMED',
      cause: LATE_OUTCOME_CAUSE,
    });
  });

  it('never overwrites a settled status, and keeps a late failure as an event only', async () => {
    const row = await intent('o-3');
    await claim(row.idempotency_key, 'w1');
    await expireLease(row.idempotency_key);
    await claim(row.idempotency_key, 'w2'); // → UNKNOWN
    const failed = await recordOutcome(
      env.db,
      {
        runId: 'o-3',
        stepIdx: 0,
        leaseOwner: 'w1',
        outcome: { status: StepStatus.UNKNOWN, error: { code: 'TOOL_TIMEOUT', message: 't' } },
        schema: env.schema,
      },
      row,
    );
    expect(failed).toEqual({ kind: 'dropped', status: 'UNKNOWN' });
    const after = await env.db
      .selectFrom('saga_log')
      .selectAll()
      .where('run_id', '=', 'o-3')
      .executeTakeFirstOrThrow();
    expect(after.status).toBe('UNKNOWN');
  });
});

describe('classifyToolError', () => {
  it('makes only ClientError FAILED', () => {
    expect(classifyToolError(new ClientError('no', { status: 422, vendorCode: 'card_declined' }))).toEqual({
      status: 'FAILED',
      error: { code: 'CLIENT_ERROR', message: 'no', status: 422, vendorCode: 'card_declined' },
    });
    expect(classifyToolError(Object.assign(new Error('bad gateway'), { status: 502 }))).toEqual({
      status: 'UNKNOWN',
      error: { code: 'OUTCOME_UNKNOWN', message: 'bad gateway', status: 502 },
    });
    expect(classifyToolError(new Error('aborted'), 'timeout').error.code).toBe('TOOL_TIMEOUT');
    expect(classifyToolError(new ClientError('late no'), 'timeout').status).toBe('UNKNOWN');
    expect(classifyToolError('a string').status).toBe('UNKNOWN');
  });
});
