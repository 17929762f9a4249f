/**
 * The standard events as data of the row (migration 0022, `steps/standard-events.ts`): the intake, the first
 * attempt and its outcome are stored in the step's `saga_log` row, every other event is a row of
 * `step_event_rows`, and the view `step_events` shows one journal, in id order, exactly as the rows the hot
 * path used to write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  appendStepEvent,
  claimStepBatch,
  createDb,
  listStepEvents,
  migrateToLatest,
  pruneLog,
  recordNewIntents,
  recordOutcomeBatch,
  RunStatus,
  StepEventKind,
  STANDARD_EVENT_COLUMNS,
  StepStatus,
  transitionStep,
  type SagaDb,
  type SagaTrx,
  type StepOutcome,
  type StepEventRow,
} from '@agent-saga/core';
import { backdateStepEvents, createTestEnv, migrateCoreTo, type TestEnv } from '@agent-saga/core/testing';
import { MIGRATIONS } from '../src/db/migrations/index.js';
import { countRedispatches, giveUpRedispatching } from '../src/steps/redispatch/redispatch-budget.js';
import { intendedStep, newIntent } from './intended-step.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('stdev');
});
afterAll(async () => env?.close());

const WORKER = 'exec-1';
const claims = { worker: WORKER, leaseMsByTool: new Map<string, number>(), defaultLeaseMs: 10_000 };

/** Every column of `saga_log` that holds a standard event (migration 0022). */
const STORED_EVENT_COLUMNS = Object.values(STANDARD_EVENT_COLUMNS).flat();

/** The executor's grouped claim of step 0 of `runId` (its job id is the key, as a first dispatch's). */
async function claim(runId: string): Promise<void> {
  const row = await env.db
    .selectFrom('saga_log')
    .select(['idempotency_key'])
    .where('run_id', '=', runId)
    .where('step_idx', '=', 0)
    .executeTakeFirstOrThrow();
  const claimed = await claimStepBatch(
    env.db,
    [{ runId, stepIdx: 0, key: row.idempotency_key, jobId: row.idempotency_key }],
    claims,
  );
  expect(claimed).toHaveLength(1);
}

/** The executor's grouped outcome of step 0 of `runId`. */
async function settle(runId: string, status: 'CONFIRMED' | 'UNKNOWN', owner = WORKER): Promise<void> {
  const outcome: StepOutcome =
    status === StepStatus.CONFIRMED
      ? { status, effect: { externalRef: 'T-1', result: { id: 'T-1' } } }
      : { status, error: { code: 'TOOL_TIMEOUT', message: 'no answer in 5 s' } };
  const rows = await recordOutcomeBatch(
    env.db,
    owner,
    [{ runId, stepIdx: 0, outcome, durationMs: 3 }],
    env.schema,
  );
  expect(rows).toHaveLength(1);
}

/** A change of status of step 0 of `runId` by another writer than the hot path (the reconciler's). */
const move = (trx: SagaTrx, runId: string, to: StepStatus, cause: string) =>
  transitionStep(trx, { runId, stepIdx: 0, to, cause, schema: env.schema });

/** The events of the run's steps, as the journal lists them (the run's own, `run created`, left out). */
async function stepJournal(runId: string): Promise<StepEventRow[]> {
  return (await listStepEvents(env.db, runId)).filter((e) => e.step_idx !== null);
}

/** What a reader of the journal compares: everything but the id's value and the time. */
const shown = (events: readonly StepEventRow[]) =>
  events.map((e) => ({
    step_idx: e.step_idx,
    kind: e.kind,
    from: e.from_status,
    to: e.to_status,
    cause: e.cause,
    detail: e.detail,
    actor: e.actor,
    traced: e.trace_id !== null && e.trace_id.length === 16,
  }));

/** Ids strictly increasing and times never going back, in the order the journal is read. */
function expectWrittenInOrder(events: readonly StepEventRow[]): void {
  const ids = events.map((e) => BigInt(e.id));
  for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  const ats = events.map((e) => e.at.getTime());
  for (let i = 1; i < ats.length; i++) expect(ats[i]!).toBeGreaterThanOrEqual(ats[i - 1]!);
}

/** How many of the run's step events are rows of `step_event_rows` (the rest are stored in its steps' rows). */
async function eventRows(runId: string): Promise<number> {
  const r = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM step_event_rows WHERE run_id = ${runId} AND step_idx IS NOT NULL`.execute(
    env.db,
  );
  return r.rows[0]!.n;
}

describe('the journal through the view step_events', () => {
  it('intake → claim → CONFIRMED: the same three events in the same order, none of them a row', async () => {
    const step = await intendedStep(env, 'se-plain');
    await claim('se-plain');
    await settle('se-plain', 'CONFIRMED');
    const events = await stepJournal('se-plain');
    expect(shown(events)).toEqual([
      {
        step_idx: 0,
        kind: 'transition',
        from: null,
        to: 'INTENDED',
        cause: 'intake',
        detail: { args: step.args },
        actor: null,
        traced: true,
      },
      {
        step_idx: 0,
        kind: 'attempt',
        from: null,
        to: null,
        cause: 'executor: claimed',
        detail: { attempt: 1, worker: WORKER, jobId: step.idempotency_key },
        actor: null,
        traced: true,
      },
      {
        step_idx: 0,
        kind: 'transition',
        from: 'INTENDED',
        to: 'CONFIRMED',
        cause: 'executor: tool returned',
        detail: { durationMs: 3 },
        actor: null,
        traced: true,
      },
    ]);
    expectWrittenInOrder(events);
    expect(events.every((e) => e.trace_id!.equals(step.trace_id!))).toBe(true);
    expect(await eventRows('se-plain')).toBe(0);
    // Stored in the row, by typed columns; the job id (the key) is not stored twice.
    const row = await env.db
      .selectFrom('saga_log')
      .select(['intake_event_id', 'attempt_event_id', 'outcome_event_id', 'attempt_job_id'])
      .where('run_id', '=', 'se-plain')
      .executeTakeFirstOrThrow();
    expect([row.intake_event_id, row.attempt_event_id, row.outcome_event_id]).toEqual(
      events.map((e) => e.id),
    );
    expect(row.attempt_job_id).toBeNull();
  });

  it("the grouped intake with a claim and a decision: intake then attempt, step by step, in the items' order", async () => {
    const claim = { owner: 'api-1', leaseMs: 10_000, cause: 'api: claimed at intake' };
    const decision = { model: 'm-1', turnId: 't-7' };
    const items = [
      { ...newIntent('se-group', 1, { claim, args: { orderId: 'o-2' } }), decision },
      newIntent('se-group', 0, { claim, args: { orderId: 'o-1' } }),
    ];
    await sql`INSERT INTO runs (run_id, tenant_id, status, metadata)
              VALUES ('se-group', 'acme', ${RunStatus.RUNNING}, '{}')`.execute(env.db);
    const written = await recordNewIntents(env.db, items, 0);
    expect(written.every((r) => r !== null)).toBe(true);
    const events = await stepJournal('se-group');
    expect(shown(events).map((e) => [e.step_idx, e.kind, e.cause, e.detail])).toEqual([
      [0, 'transition', 'intake', { args: { orderId: 'o-1' } }],
      [
        0,
        'attempt',
        'api: claimed at intake',
        { attempt: 1, worker: 'api-1', jobId: items[1]!.idempotencyKey },
      ],
      [1, 'transition', 'intake', { args: { orderId: 'o-2' }, decision }],
      [
        1,
        'attempt',
        'api: claimed at intake',
        { attempt: 1, worker: 'api-1', jobId: items[0]!.idempotencyKey },
      ],
    ]);
    expectWrittenInOrder(events);
    expect(await eventRows('se-group')).toBe(0);
  });

  it('a second attempt: its ATTEMPT and every later event are rows, interleaved by id with the stored ones', async () => {
    const step = await intendedStep(env, 'se-again');
    /** The reconciler proves the attempt never reached the system: NOT_EXECUTED. */
    const provenAbsent = () =>
      env.db.transaction().execute(async (trx) => {
        await appendStepEvent(trx, {
          runId: 'se-again',
          stepIdx: 0,
          kind: StepEventKind.LOOKUP,
          cause: 'reconciler: not found',
          detail: { found: false },
        });
        await move(trx, 'se-again', StepStatus.NOT_EXECUTED, 'reconciler: not found after lag');
      });
    await claim('se-again');
    await settle('se-again', 'UNKNOWN');
    await provenAbsent();
    await env.db
      .transaction()
      .execute((trx) => move(trx, 'se-again', StepStatus.INTENDED, 'reconciler: re-dispatched'));
    await claim('se-again');
    await settle('se-again', 'UNKNOWN');
    await provenAbsent();
    const events = await stepJournal('se-again');
    expect(shown(events).map((e) => [e.kind, e.from, e.to, e.cause])).toEqual([
      ['transition', null, 'INTENDED', 'intake'],
      ['attempt', null, null, 'executor: claimed'],
      ['transition', 'INTENDED', 'UNKNOWN', 'executor: tool threw'],
      ['lookup', null, null, 'reconciler: not found'],
      ['transition', 'UNKNOWN', 'NOT_EXECUTED', 'reconciler: not found after lag'],
      ['transition', 'NOT_EXECUTED', 'INTENDED', 'reconciler: re-dispatched'],
      ['attempt', null, null, 'executor: claimed'],
      ['transition', 'INTENDED', 'UNKNOWN', 'executor: tool threw'],
      ['lookup', null, null, 'reconciler: not found'],
      ['transition', 'UNKNOWN', 'NOT_EXECUTED', 'reconciler: not found after lag'],
    ]);
    expect(events[1]!.detail).toEqual({ attempt: 1, worker: WORKER, jobId: step.idempotency_key });
    expect(events[6]!.detail).toEqual({ attempt: 2, worker: WORKER, jobId: step.idempotency_key });
    expect(events[2]!.detail).toEqual({ durationMs: 3, code: 'TOOL_TIMEOUT', message: 'no answer in 5 s' });
    expect(events[7]!.detail).toEqual(events[2]!.detail);
    expectWrittenInOrder(events);
    expect(events.every((e) => e.trace_id!.equals(step.trace_id!))).toBe(true);
    // The first three are stored in the row; the second attempt, its outcome and the rest are rows.
    expect(await eventRows('se-again')).toBe(7);

    // The re-dispatch budget counts the re-dispatch, and its evidence lists both attempts, stored and row.
    const evidence = await env.db.transaction().execute(async (trx) => {
      expect((await countRedispatches(trx, 'se-again', 0)).count).toBe(1);
      await giveUpRedispatching(trx, {
        runId: 'se-again',
        stepIdx: 0,
        redispatches: 1,
        maxRedispatches: 1,
        cause: 'reconciler: not found after lag',
        schema: env.schema,
      });
      return trx
        .selectFrom('cases')
        .select('evidence')
        .where('run_id', '=', 'se-again')
        .executeTakeFirstOrThrow();
    });
    const attempts = (evidence.evidence as { attempts: { cause: string; detail: { attempt: number } }[] })
      .attempts;
    expect(attempts.map((a) => [a.cause, a.detail.attempt])).toEqual([
      ['executor: claimed', 1],
      ['executor: claimed', 2],
    ]);
  });

  it('UNKNOWN, then CONFIRMED by the reconciler: the later change is a row after the stored outcome', async () => {
    await intendedStep(env, 'se-late');
    await claim('se-late');
    await settle('se-late', 'UNKNOWN');
    await env.db.transaction().execute(async (trx) => {
      await appendStepEvent(trx, {
        runId: 'se-late',
        stepIdx: 0,
        kind: StepEventKind.LOOKUP,
        cause: 'reconciler: found',
        detail: { found: true, externalRef: 'T-9' },
      });
      await transitionStep(trx, {
        runId: 'se-late',
        stepIdx: 0,
        to: StepStatus.CONFIRMED,
        cause: 'reconciler: found by key',
        detail: { externalRef: 'T-9' },
        patch: { external_ref: 'T-9' },
        schema: env.schema,
      });
    });
    const events = await stepJournal('se-late');
    expect(shown(events).map((e) => [e.kind, e.from, e.to, e.cause])).toEqual([
      ['transition', null, 'INTENDED', 'intake'],
      ['attempt', null, null, 'executor: claimed'],
      ['transition', 'INTENDED', 'UNKNOWN', 'executor: tool threw'],
      ['lookup', null, null, 'reconciler: found'],
      ['transition', 'UNKNOWN', 'CONFIRMED', 'reconciler: found by key'],
    ]);
    expectWrittenInOrder(events);
    expect(await eventRows('se-late')).toBe(2);
    // A page from the middle (after the stored attempt) reads on by id across both kinds.
    const after = await env.db
      .selectFrom('step_events')
      .select(['cause'])
      .where('run_id', '=', 'se-late')
      .where('id', '>', events[1]!.id)
      .orderBy('id')
      .limit(2)
      .execute();
    expect(after.map((e) => e.cause)).toEqual(['executor: tool threw', 'reconciler: found']);
  });
});

describe('retention of the stored events', () => {
  it('prunes the stored events of an old final run with its rows, and keeps the step row', async () => {
    await intendedStep(env, 'se-old');
    await claim('se-old');
    await settle('se-old', 'UNKNOWN');
    await env.db
      .transaction()
      .execute((trx) => move(trx, 'se-old', StepStatus.CONFIRMED, 'reconciler: found by key'));
    const by = sql`40 * interval '1 day'`;
    await sql`UPDATE runs SET status = ${RunStatus.COMPLETED}, updated_at = now() - ${by}
               WHERE run_id = 'se-old'`.execute(env.db);
    await backdateStepEvents(env.db, 'se-old', by);
    // A run that is not old keeps everything.
    await intendedStep(env, 'se-young');
    await claim('se-young');

    const dry = await pruneLog(env.db, { olderThanMs: 30 * 86_400_000, dryRun: true });
    expect(dry.stepEvents).toBe(5); // and the run's own `run created`
    const done = await pruneLog(env.db, { olderThanMs: 30 * 86_400_000, batchSize: 1 });
    expect(done.stepEvents).toBe(5);
    expect(await listStepEvents(env.db, 'se-old')).toEqual([]);
    const row = await env.db
      .selectFrom('saga_log')
      .select(['status', ...STORED_EVENT_COLUMNS])
      .where('run_id', '=', 'se-old')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      status: 'CONFIRMED',
      ...Object.fromEntries(STORED_EVENT_COLUMNS.map((c) => [c, null])),
    });
    expect((await stepJournal('se-young')).map((e) => e.cause)).toEqual(['intake', 'executor: claimed']);
    expect(await pruneLog(env.db, { olderThanMs: 30 * 86_400_000 })).toMatchObject({ stepEvents: 0 });
  });
});

/**
 * Runs `test` on a schema of its own migrated to the latest version, with run `runId` RUNNING (for the
 * tests that migrate down and up again), and drops the schema after.
 */
async function inFreshSchema(
  suffix: string,
  runId: string,
  test: (db: SagaDb, schema: string) => Promise<void>,
): Promise<void> {
  const schema = `${env.schema}_${suffix}`;
  const db = createDb({ url: env.databaseUrl, schema });
  try {
    await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(db);
    await migrateToLatest(db, schema);
    await sql`INSERT INTO runs (run_id, tenant_id, status) VALUES (${runId}, 'acme', 'RUNNING')`.execute(db);
    await test(db, schema);
  } finally {
    await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
    await db.destroy();
  }
}

/** The inline executor's CONFIRMED outcome of step 0 of `runId`, claimed at intake by `api-1`. */
async function confirmAtIntakeOwner(
  db: SagaDb,
  schema: string,
  runId: string,
  durationMs?: number,
): Promise<void> {
  const outcome: StepOutcome = { status: 'CONFIRMED', effect: { externalRef: 'x', result: null } };
  const rows = await recordOutcomeBatch(db, 'api-1', [{ runId, stepIdx: 0, outcome, durationMs }], schema);
  expect(rows).toHaveLength(1);
}

describe('migration 0022 down', () => {
  it('turns the stored events back into rows: the journal reads the same before and after', async () => {
    await inFreshSchema('down', 'd', async (db, schema) => {
      await recordNewIntents(
        db,
        [newIntent('d', 0, { claim: { owner: 'api-1', leaseMs: 10_000, cause: 'api: claimed at intake' } })],
        0,
      );
      await confirmAtIntakeOwner(db, schema, 'd', 1);
      const journal = sql<Record<string, unknown>>`SELECT * FROM step_events WHERE run_id = 'd' ORDER BY id`;
      const before = (await journal.execute(db)).rows;
      expect(before).toHaveLength(3);
      const names = Object.keys(MIGRATIONS);
      expect(
        (await migrateCoreTo(db, schema, names[names.indexOf('0022_standard_events_in_row') - 1]!)).error,
      ).toBeUndefined();
      expect((await journal.execute(db)).rows).toEqual(before);
      await migrateToLatest(db, schema);
      expect((await journal.execute(db)).rows).toEqual(before);
    });
  });
});

describe('migration 0023: the narrow row', () => {
  it('stores the usual values as null, the hash as its bytes; the view and 0023 down give the same journal', async () => {
    await inFreshSchema('narrow', 'n', async (db, schema) => {
      const intent = newIntent('n', 0, {
        claim: { owner: 'api-1', leaseMs: 10_000, cause: 'api: claimed at intake' },
        compensation: { tool: 'close_ticket', toolVersion: 1, args: { ticket: { $ref: 'k' } }, key: 'ck' },
      });
      await recordNewIntents(db, [intent], 0);
      await confirmAtIntakeOwner(db, schema, 'n');
      const stored = await sql<Record<string, unknown>>`
        SELECT intake_to, attempt_cause, outcome_to, outcome_cause, outcome_detail, encode(payload_hash, 'hex') AS hash,
               pg_typeof(compensation)::text AS compensation_type
          FROM saga_log WHERE run_id = 'n'`.execute(db);
      expect(stored.rows[0]).toEqual({
        intake_to: null,
        attempt_cause: null,
        outcome_to: null,
        outcome_cause: null,
        outcome_detail: null,
        hash: intent.payloadHash,
        compensation_type: 'json',
      });
      const journal = sql<Record<string, unknown>>`
        SELECT kind, from_status, to_status, cause, detail FROM step_events WHERE run_id = 'n' ORDER BY id`;
      const shownBefore = (await journal.execute(db)).rows;
      expect(shownBefore).toEqual([
        {
          kind: 'transition',
          from_status: null,
          to_status: 'INTENDED',
          cause: 'intake',
          detail: { args: intent.args },
        },
        {
          kind: 'attempt',
          from_status: null,
          to_status: null,
          cause: 'api: claimed at intake',
          detail: { attempt: 1, worker: 'api-1', jobId: intent.idempotencyKey },
        },
        {
          kind: 'transition',
          from_status: 'INTENDED',
          to_status: 'CONFIRMED',
          cause: 'executor: tool returned',
          detail: {},
        },
      ]);
      const names = Object.keys(MIGRATIONS);
      expect(
        (await migrateCoreTo(db, schema, names[names.indexOf('0023_narrow_saga_log_row') - 1]!)).error,
      ).toBeUndefined();
      expect((await journal.execute(db)).rows).toEqual(shownBefore);
      const down = await sql<Record<string, unknown>>`
        SELECT intake_to, attempt_cause, outcome_to, outcome_cause, payload_hash, compensation
          FROM saga_log WHERE run_id = 'n'`.execute(db);
      expect(down.rows[0]).toEqual({
        intake_to: 'INTENDED',
        attempt_cause: 'api: claimed at intake',
        outcome_to: 'CONFIRMED',
        outcome_cause: 'executor: tool returned',
        payload_hash: intent.payloadHash,
        compensation: intent.compensation,
      });
      await migrateToLatest(db, schema);
      expect((await journal.execute(db)).rows).toEqual(shownBefore);
    });
  });
});
