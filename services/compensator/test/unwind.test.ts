/**
 * The compensator as a real child process, the API in-process (the harness plays the executor by writing
 * the log and running the fixture tools). Effects are counted in `fixture_effects`, by key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { compensationKey, CrashPoint, payloadHash, recordIntent, stepKey } from '@agent-saga/core';
import {
  call,
  executeStep,
  newRun,
  request,
  startApiHarness,
  type ApiHarness,
} from '../../dispatcher/test/api-harness.js';
import { effectsFor, injectFault, setEffectState } from '../../../test/fixtures/effect-tools.js';
import {
  killAll,
  startRole,
  waitFor,
  type RoleProcess,
} from '../../../test/fixtures/dispatcher-processes.js';

let h: ApiHarness;
const procs: RoleProcess[] = [];
let compensator: RoleProcess;
/** Short timings so a test sees backoffs, leases and a dead peer's runs come back in well under a second. */
const ROLE_ENV = {
  FIXTURE_TOOL_TIMEOUT_MS: '1000',
  COMPENSATOR_SWEEP_MS: '200',
  COMPENSATOR_POLL_MS: '50',
  COMPENSATION_BACKOFF_MS: '50',
  COMPENSATOR_LEASE_MARGIN_MS: '200',
  LOOKUP_RECHECK_MS: '20',
  COMPENSATOR_UNKNOWN_MIN_WAIT_MS: '2000',
};
const startCompensator = (extra: Record<string, string> = {}) => {
  const p = startRole(h.env, 'compensator', { ...ROLE_ENV, ...extra });
  procs.push(p);
  return p;
};

beforeAll(async () => {
  h = await startApiHarness('unwind');
  compensator = startCompensator();
});
afterAll(async () => {
  await killAll(procs);
  await h?.close();
});

/** A run with `n` confirmed create_note steps (optionally with dependsOn per step). */
async function confirmedRun(runId: string, n: number, dependsOn: (number[] | undefined)[] = []) {
  await newRun(h, runId);
  for (let i = 0; i < n; i++) {
    const deps = dependsOn[i];
    const r = await call(h, runId, {
      tool: 'create_note',
      args: { orderId: `${runId}-${i}`, text: `note ${i}` },
      stepIdx: i,
      ...(deps ? { dependsOn: deps } : {}),
    });
    expect(r.status).toBe(202);
    await executeStep(h, runId, i, { to: 'CONFIRMED' });
  }
}

const unwind = (runId: string, reason = 'test') => request(h, 'POST', `/v1/runs/${runId}/unwind`, { reason });
const getRun = async (runId: string) => (await request(h, 'GET', `/v1/runs/${runId}`)).body;
const terminal = (runId: string) =>
  waitFor(
    `run ${runId} terminal`,
    async () => {
      const run = await getRun(runId);
      return run.status !== 'COMPENSATING' ? run : undefined;
    },
    30_000,
  );
const compKey = (runId: string, i: number, tool = 'create_note') => compensationKey(runId, i, tool);

/** The time of the first compensation event of step `i` that moved it to `to`. */
async function compensationAt(runId: string, i: number, to: string): Promise<Date> {
  const r = await h.env.db
    .selectFrom('step_events')
    .select('at')
    .where('run_id', '=', runId)
    .where('step_idx', '=', i)
    .where('kind', '=', 'compensation')
    .where('to_status', '=', to)
    .orderBy('id')
    .executeTakeFirstOrThrow();
  return r.at;
}

describe('unwind', () => {
  it('undoes three confirmed steps in reverse order, each exactly once; the run is COMPENSATED', async () => {
    await confirmedRun('u-three', 3);
    const first = await unwind('u-three', 'customer cancelled');
    expect(first).toMatchObject({ status: 202, body: { runId: 'u-three', status: 'COMPENSATING' } });
    // Asked again while compensating: the same answer.
    expect((await unwind('u-three')).status).toBe(202);
    // New side-effecting calls are refused from now on.
    const refused = await call(h, 'u-three', {
      tool: 'create_note',
      args: { orderId: 'x', text: 'y' },
      stepIdx: 3,
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error?.code).toBe('RUN_NOT_RUNNING');

    const run = await terminal('u-three');
    expect(run.status).toBe('COMPENSATED');
    expect(run.statusReason).toContain('every effect undone');
    const steps = run.steps as { compensationStatus: string }[];
    expect(steps.map((s) => s.compensationStatus)).toEqual(['compensated', 'compensated', 'compensated']);
    for (let i = 0; i < 3; i++) {
      const effects = await effectsFor(h.raw, compKey('u-three', i));
      expect(effects).toEqual([expect.objectContaining({ tool: 'delete_note' })]);
    }
    // Reverse order: step 2 is undone before step 1 starts, step 1 before step 0.
    const [c2, r1, c1, r0] = await Promise.all([
      compensationAt('u-three', 2, 'compensated'),
      compensationAt('u-three', 1, 'running'),
      compensationAt('u-three', 1, 'compensated'),
      compensationAt('u-three', 0, 'running'),
    ]);
    expect(c2.getTime()).toBeLessThanOrEqual(r1.getTime());
    expect(c1.getTime()).toBeLessThanOrEqual(r0.getTime());
    // A terminal run cannot be unwound again.
    const again = await unwind('u-three');
    expect(again.status).toBe(409);
    expect(again.body.error?.code).toBe('RUN_NOT_RUNNING');
  });

  it('a run unwound before any step reached the log ends COMPENSATED, nothing to undo', async () => {
    await newRun(h, 'u-empty');
    expect((await unwind('u-empty', 'the first call never arrived')).status).toBe(202);
    const run = await terminal('u-empty');
    expect(run.status).toBe('COMPENSATED');
    expect(run.statusReason).toContain('nothing to undo: no step in the log');
    expect(run.steps).toEqual([]);
  });

  it('reconciles an UNKNOWN step first (its effect exists), then compensates it; FAILED and unsent steps are skipped', async () => {
    await newRun(h, 'u-unknown');
    for (let i = 0; i < 3; i++)
      await call(h, 'u-unknown', {
        tool: 'create_note',
        args: { orderId: `uu-${i}`, text: 't' },
        stepIdx: i,
      });
    await executeStep(h, 'u-unknown', 0, { to: 'UNKNOWN', effect: true });
    await executeStep(h, 'u-unknown', 1, { to: 'FAILED' });
    // Step 2 stays INTENDED, never claimed: withdrawn, nothing to undo.
    expect((await unwind('u-unknown')).status).toBe(202);
    const run = await terminal('u-unknown');
    expect(run.status).toBe('COMPENSATED');
    const steps = run.steps as { status: string; compensationStatus: string }[];
    expect(steps.map((s) => [s.status, s.compensationStatus])).toEqual([
      ['CONFIRMED', 'compensated'],
      ['FAILED', 'skipped'],
      ['NOT_EXECUTED', 'skipped'],
    ]);
    expect(await effectsFor(h.raw, compKey('u-unknown', 0))).toHaveLength(1);
    expect(await effectsFor(h.raw, compKey('u-unknown', 1))).toHaveLength(0);
    expect(await effectsFor(h.raw, stepKey('u-unknown', 2, 'create_note'))).toHaveLength(0);
  });

  it('a compensation that fails twice is retried with the same key and undoes once', async () => {
    await confirmedRun('u-retry', 1);
    await injectFault(h.raw, 'delete_note', 'error_before', 2);
    await unwind('u-retry');
    const run = await terminal('u-retry');
    expect(run.status).toBe('COMPENSATED');
    expect(await effectsFor(h.raw, compKey('u-retry', 0))).toHaveLength(1);
    const comp = await h.env.db
      .selectFrom('compensations')
      .selectAll()
      .where('run_id', '=', 'u-retry')
      .executeTakeFirstOrThrow();
    expect(comp.attempts).toBe(3);
    expect(comp.idempotency_key).toBe(compKey('u-retry', 0));
  });

  it('a compensation answered 504 after its effect is looked up by key, not repeated', async () => {
    await confirmedRun('u-lost', 1);
    await injectFault(h.raw, 'delete_note', 'error_after', 1);
    await unwind('u-lost');
    const run = await terminal('u-lost');
    expect(run.status).toBe('COMPENSATED');
    expect(await effectsFor(h.raw, compKey('u-lost', 0))).toHaveLength(1);
    const comp = await h.env.db
      .selectFrom('compensations')
      .selectAll()
      .where('run_id', '=', 'u-lost')
      .executeTakeFirstOrThrow();
    expect(comp.attempts).toBe(1);
  });

  it('an irreversible confirmed step is never executed backwards: its correction is queued', async () => {
    await confirmedRun('u-irrev', 1);
    // An irreversible step that a person approved and that ran (the approval API is a later issue).
    await h.env.db.transaction().execute((trx) =>
      recordIntent(trx, {
        runId: 'u-irrev',
        stepIdx: 1,
        tenantId: 't1',
        tool: 'send_notice',
        toolClass: 'irreversible',
        toolVersion: 1,
        idempotencyKey: stepKey('u-irrev', 1, 'send_notice'),
        args: { to: 'c@example.com', text: 'your refund' },
        payloadHash: payloadHash('send_notice', { to: 'c@example.com', text: 'your refund' }),
        compensation: null,
        correction: { template: 'notice_sent_in_error', to: 'c@example.com', vars: {} },
        audience: ['customer'],
        dependsOn: null,
        status: 'INTENDED',
        schema: h.env.schema,
      }),
    );
    await executeStep(h, 'u-irrev', 1, { to: 'CONFIRMED' });
    await unwind('u-irrev');
    const run = await terminal('u-irrev');
    expect(run.status).toBe('PARTIALLY_COMPENSATED');
    expect(run.statusReason).toContain('step 1 (send_notice)');
    const corrections = run.corrections as {
      stepIdx: number;
      status: string;
      command: { template: string };
    }[];
    expect(corrections.map((c) => [c.stepIdx, c.status, c.command.template])).toEqual([
      [1, 'open', 'notice_sent_in_error'],
    ]);
    expect((run.steps as { compensationStatus: string }[])[1]?.compensationStatus).toBe('skipped');
    expect(await effectsFor(h.raw, compKey('u-irrev', 0))).toHaveLength(1);
  });

  it('a parallel branch: steps 1 and 2 depend only on 0; both are undone before 0', async () => {
    await confirmedRun('u-branch', 3, [undefined, [0], [0]]);
    const stored = await h.env.db
      .selectFrom('saga_log')
      .select(['step_idx', 'depends_on'])
      .where('run_id', '=', 'u-branch')
      .orderBy('step_idx')
      .execute();
    expect(stored.map((s) => s.depends_on)).toEqual([null, [0], [0]]);
    await unwind('u-branch');
    expect((await terminal('u-branch')).status).toBe('COMPENSATED');
    const [c1, c2, r0] = await Promise.all([
      compensationAt('u-branch', 1, 'compensated'),
      compensationAt('u-branch', 2, 'compensated'),
      compensationAt('u-branch', 0, 'running'),
    ]);
    expect(Math.max(c1.getTime(), c2.getTime())).toBeLessThanOrEqual(r0.getTime());
  });

  it('complete: COMPLETED once every step is settled, 409 STEP_UNRESOLVED otherwise', async () => {
    await confirmedRun('u-done', 1);
    await call(h, 'u-done', { tool: 'create_note', args: { orderId: 'd-1', text: 't' }, stepIdx: 1 });
    const early = await request(h, 'POST', '/v1/runs/u-done/complete');
    expect(early.status).toBe(409);
    expect(early.body.error?.code).toBe('STEP_UNRESOLVED');
    await executeStep(h, 'u-done', 1, { to: 'CONFIRMED' });
    const done = await request(h, 'POST', '/v1/runs/u-done/complete');
    expect(done).toMatchObject({ status: 200, body: { status: 'COMPLETED' } });
  });

  it('precondition: a note a person already deleted is compensated with that evidence; nothing is sent', async () => {
    await confirmedRun('u-pre-done', 1);
    await setEffectState(h.raw, stepKey('u-pre-done', 0, 'create_note'), 'deleted');
    await unwind('u-pre-done');
    const run = await terminal('u-pre-done');
    expect(run.status).toBe('COMPENSATED');
    expect((run.steps as { compensationStatus: string }[])[0]?.compensationStatus).toBe('compensated');
    expect(await effectsFor(h.raw, compKey('u-pre-done', 0))).toHaveLength(0);
    const events = await h.env.db
      .selectFrom('step_events')
      .select(['cause', 'detail'])
      .where('run_id', '=', 'u-pre-done')
      .where('kind', '=', 'compensation')
      .where('to_status', '=', 'compensated')
      .execute();
    expect(events).toEqual([
      {
        cause: 'precondition: the target is already in the compensated state; nothing sent',
        detail: expect.objectContaining({
          precondition: 'already_compensated',
          forwardTool: 'create_note',
        }) as unknown,
      },
    ]);
    const comp = await h.env.db
      .selectFrom('compensations')
      .select('attempts')
      .where('run_id', '=', 'u-pre-done')
      .executeTakeFirstOrThrow();
    expect(comp.attempts).toBe(0);
  });

  it('precondition: a note changed otherwise is not overwritten; a case, the run MANUAL_INTERVENTION', async () => {
    await confirmedRun('u-pre-edit', 2);
    await setEffectState(h.raw, stepKey('u-pre-edit', 0, 'create_note'), 'edited');
    await unwind('u-pre-edit');
    const run = await terminal('u-pre-edit');
    expect(run.status).toBe('MANUAL_INTERVENTION');
    expect(run.statusReason).toContain('the target changed since the forward step');
    const steps = run.steps as { compensationStatus: string }[];
    expect(steps.map((s) => s.compensationStatus)).toEqual(['failed', 'compensated']);
    // Step 1 (untouched) is undone; step 0's note is left as the person left it.
    expect(await effectsFor(h.raw, compKey('u-pre-edit', 1))).toHaveLength(1);
    expect(await effectsFor(h.raw, compKey('u-pre-edit', 0))).toHaveLength(0);
    const cases = run.cases as { stepIdx: number; reason: string; evidence: { error: unknown } }[];
    expect(cases).toEqual([
      expect.objectContaining({
        stepIdx: 0,
        reason: expect.stringContaining('is edited, was open') as unknown,
        evidence: expect.objectContaining({
          attempts: 0,
          error: expect.objectContaining({ name: 'PreconditionChanged', precondition: 'changed' }) as unknown,
        }) as unknown,
      }),
    ]);
  });

  it('a compensator SIGKILLed after a compensation took effect: a fresh one finishes, nothing twice', async () => {
    expect((await compensator.stop()).code).toBe(0);
    await confirmedRun('u-crash', 2);
    const crashing = startCompensator({
      SAGA_CRASH_POINTS: CrashPoint.COMPENSATION_AFTER_TOOL_BEFORE_RECORD,
    });
    await unwind('u-crash');
    expect((await crashing.exited).signal).toBe('SIGKILL');
    expect(await effectsFor(h.raw, compKey('u-crash', 1))).toHaveLength(1);
    startCompensator();
    const run = await terminal('u-crash');
    expect(run.status).toBe('COMPENSATED');
    expect(await effectsFor(h.raw, compKey('u-crash', 1))).toHaveLength(1);
    expect(await effectsFor(h.raw, compKey('u-crash', 0))).toHaveLength(1);
    const events = await sql<{ cause: string }>`
      SELECT cause FROM step_events WHERE run_id = 'u-crash' AND step_idx = 1 AND kind = 'compensation'
       ORDER BY id`.execute(h.env.db);
    expect(events.rows.map((e) => e.cause)).toContain(
      'lease expired: the attempt may have reached the system',
    );
  });

  it('needs Postgres alone: with its REDIS_URL pointing nowhere, a compensator unwinds', async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await confirmedRun('u-pg-only', 2);
    const alone = startCompensator({ REDIS_URL: 'redis://127.0.0.1:1' });
    expect((await unwind('u-pg-only')).status).toBe(202);
    const run = await terminal('u-pg-only');
    expect(run.status).toBe('COMPENSATED');
    for (const i of [0, 1]) expect(await effectsFor(h.raw, compKey('u-pg-only', i))).toHaveLength(1);
    expect(alone.child.exitCode).toBeNull();
    expect(alone.output()).not.toMatch(/ECONNREFUSED|ioredis|127\.0\.0\.1:1\b/);
  });
});
