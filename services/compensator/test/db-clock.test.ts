/**
 * The compensator's leases are stamped and judged on the database's clock, never its process's: an
 * in-test compensator (the same code as the role) whose `Date` is faked decades away from the database's
 * `now()` still writes `lease_until = now() + lease` and expires a lease only when `now()` passes it. So is
 * the commit horizon of an unknown forward step it reconciles before the unwind: a refusal under the key
 * (`refusedUnderKey`) is believed only once the database says the horizon has passed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'kysely';
import { ClientError, compensationKey, refusedUnderKey, type AnyTool, type StepRow } from '@agent-saga/core';
import {
  call,
  executeStep,
  newRun,
  request,
  startApiHarness,
  type ApiHarness,
} from '../../dispatcher/test/api-harness.js';
import { effectsFor, FaultKind, injectFault } from '../../../test/fixtures/effect-tools.js';
import { waitFor } from '../../../test/fixtures/dispatcher-processes.js';
import { driveRun, type UnwindDeps } from '../src/index.js';
import { inTestCompensator } from './in-test-compensator.js';

let h: ApiHarness;
const ROLE_ENV = {
  COMPENSATOR_POLL_MS: '50',
  COMPENSATION_BACKOFF_MS: '50',
  COMPENSATOR_LEASE_MARGIN_MS: '3000',
  LOOKUP_RECHECK_MS: '20',
  COMPENSATOR_UNKNOWN_MIN_WAIT_MS: '2000',
};

beforeAll(async () => {
  h = await startApiHarness('comp_clock');
});
afterAll(async () => h?.close());
afterEach(() => vi.useRealTimers());

/** Fakes this process's `Date` only (timers stay real, and the faked clock ticks with them). */
const processClockAt = (iso: string) =>
  vi.useFakeTimers({ toFake: ['Date'], now: new Date(iso), shouldAdvanceTime: true });

const driver = (shutdown = new AbortController(), tools: readonly AnyTool[] = h.tools): UnwindDeps =>
  inTestCompensator(h, { workerId: 'in-test-clock', env: ROLE_ENV, tools, shutdown: shutdown.signal });

async function unwoundRun(runId: string): Promise<StepRow> {
  await newRun(h, runId);
  const r = await call(h, runId, { tool: 'create_note', args: { orderId: runId, text: 'n' }, stepIdx: 0 });
  expect(r.status).toBe(202);
  await executeStep(h, runId, 0, { to: 'CONFIRMED' });
  expect((await request(h, 'POST', `/v1/runs/${runId}/unwind`, { reason: 'clock' })).status).toBe(202);
  return h.env.db
    .selectFrom('saga_log')
    .selectAll()
    .where('run_id', '=', runId)
    .where('step_idx', '=', 0)
    .executeTakeFirstOrThrow();
}

const runStatus = async (runId: string) =>
  (await h.env.db.selectFrom('runs').select('status').where('run_id', '=', runId).executeTakeFirstOrThrow())
    .status;

describe('compensator leases on the database clock', () => {
  it('stamps an attempt`s lease as the database`s now() + lease while its process clock says 2000', async () => {
    const runId = 'clock-stamp';
    const step = await unwoundRun(runId);
    // The attempt hangs until the tool's timeout, so its lease can be read while it is held.
    await injectFault(h.raw, 'delete_note', FaultKind.TIMEOUT);
    const d = driver();
    const leaseMs = d.registry.get('delete_note')!.timeoutMs + d.config.COMPENSATOR_LEASE_MARGIN_MS;
    processClockAt('2000-01-01T00:00:00Z');
    const driven = driveRun(d, runId, 30_000);
    const held = await waitFor(
      'the attempt running under its lease',
      async () => {
        const r = await sql<{
          lease_until: Date;
          last_attempt_at: Date;
          lease_ms: number;
          stamped_ago_ms: number;
        }>`
          SELECT lease_until, last_attempt_at,
                 extract(epoch FROM lease_until - last_attempt_at) * 1000 AS lease_ms,
                 extract(epoch FROM now() - last_attempt_at) * 1000 AS stamped_ago_ms
            FROM compensations
           WHERE run_id = ${runId} AND status = 'running' AND lease_until IS NOT NULL`.execute(h.env.db);
        return r.rows[0];
      },
      10_000,
      20,
    );
    // Stamped by the database: `last_attempt_at` is its now() of moments ago, and the lease is exactly
    // the tool's timeout plus the margin after it (one statement, one now()).
    expect(Number(held.lease_ms)).toBeCloseTo(leaseMs, 0);
    expect(Number(held.stamped_ago_ms)).toBeGreaterThanOrEqual(0);
    expect(Number(held.stamped_ago_ms)).toBeLessThan(10_000);
    // Not the process's clock (which says 2000).
    expect(held.lease_until.getUTCFullYear()).toBeGreaterThan(2020);
    expect(await driven).toBe('finished');
    vi.useRealTimers();
    expect(await runStatus(runId)).toBe('COMPENSATED');
    // The timed-out attempt sent nothing; after its lookup the compensation was sent once.
    expect(await effectsFor(h.raw, step.compensation!.key)).toEqual([
      expect.objectContaining({ tool: 'delete_note' }),
    ]);
  });

  it('never expires a lease the database says is live, and expires it once now() has passed it', async () => {
    const runId = 'clock-expiry';
    const step = await unwoundRun(runId);
    const key = step.compensation!.key;
    expect(key).toBe(compensationKey(runId, 0, 'create_note'));
    // Another compensator's attempt, live by the database's clock for an hour.
    await sql`
      INSERT INTO compensations (run_id, step_idx, tenant_id, tool, idempotency_key, args, status, attempts,
                                 lease_until, lease_owner, last_attempt_at)
      VALUES (${runId}, 0, ${step.tenant_id}, 'delete_note', ${key},
              ${JSON.stringify(step.compensation!.args)}::jsonb, 'running', 1,
              now() + interval '1 hour', 'other-compensator', now())`.execute(h.env.db);

    // This process believes it is 2100: by its clock the lease ran out long ago.
    processClockAt('2100-01-01T00:00:00Z');
    const stop = new AbortController();
    const stopping = setTimeout(() => stop.abort(), 1_500);
    expect(await driveRun(driver(stop), runId, 1_500)).toBe('unfinished');
    clearTimeout(stopping);
    const still = await h.env.db
      .selectFrom('compensations')
      .select(['status', 'lease_owner'])
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(still).toEqual({ status: 'running', lease_owner: 'other-compensator' });

    // The database's clock passes the lease; this process now believes it is 2000 (lease far ahead).
    await sql`UPDATE compensations SET lease_until = now() - interval '1 second' WHERE run_id = ${runId}`.execute(
      h.env.db,
    );
    processClockAt('2000-01-01T00:00:00Z');
    expect(await driveRun(driver(), runId, 30_000)).toBe('finished');
    vi.useRealTimers();
    const expired = await h.env.db
      .selectFrom('step_events')
      .select('cause')
      .where('run_id', '=', runId)
      .where('kind', '=', 'compensation')
      .where('to_status', '=', 'unknown')
      .execute();
    expect(expired.map((e) => e.cause)).toEqual(['lease expired: the attempt may have reached the system']);
    expect(await runStatus(runId)).toBe('COMPENSATED');
    // The ghost attempt never reached the system; the compensation was sent once, after its lookup.
    expect(await effectsFor(h.raw, key)).toEqual([expect.objectContaining({ tool: 'delete_note' })]);
  });
});

describe('reconcile before unwind on the database clock', () => {
  /** Why 10 s: the horizon of the forward tool, far longer than the first drive, so it cannot pass by itself. */
  const HORIZON_MS = 10_000;
  const looked: string[] = [];
  /** The fixture `create_note`, but its lookup finds the call refused under the key (vendor left it incomplete). */
  const refusingTools = (): AnyTool[] =>
    h.tools.map((t) =>
      t.name !== 'create_note'
        ? t
        : {
            ...t,
            commitHorizonMs: HORIZON_MS,
            lookup: (key: string) => {
              looked.push(key);
              return Promise.resolve(
                refusedUnderKey(new ClientError('vendor left it incomplete', { vendorCode: 'x_incomplete' })),
              );
            },
          },
    );

  it('a forward step found refused under the key: FAILED past its horizon, nothing compensated', async () => {
    const runId = 'clock-refused';
    await newRun(h, runId);
    const r = await call(h, runId, { tool: 'create_note', args: { orderId: runId, text: 'n' }, stepIdx: 0 });
    expect(r.status).toBe(202);
    const step = await executeStep(h, runId, 0, { to: 'UNKNOWN', effect: false });
    expect((await request(h, 'POST', `/v1/runs/${runId}/unwind`, { reason: 'clock' })).status).toBe(202);
    const tools = refusingTools();

    // Just sent, by the database; 2100 by this process's clock, by which the horizon passed long ago.
    processClockAt('2100-01-01T00:00:00Z');
    expect(await driveRun(driver(new AbortController(), tools), runId, 1_000)).toBe('unfinished');
    vi.useRealTimers();
    expect(looked).toContain(step.idempotency_key);
    const waiting = await h.env.db
      .selectFrom('saga_log')
      .select(['status'])
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(waiting.status).toBe('UNKNOWN');

    // The database's clock passes the horizon; this process believes it is 2000 (the attempt far ahead).
    await sql`UPDATE saga_log SET last_attempt_at = now() - interval '1 minute' WHERE run_id = ${runId}`.execute(
      h.env.db,
    );
    processClockAt('2000-01-01T00:00:00Z');
    expect(await driveRun(driver(new AbortController(), tools), runId, 30_000)).toBe('finished');
    vi.useRealTimers();
    const settled = await h.env.db
      .selectFrom('saga_log')
      .select(['status', 'error', 'compensation_status'])
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(settled).toMatchObject({
      status: 'FAILED',
      error: { code: 'CLIENT_ERROR', message: 'vendor left it incomplete', vendorCode: 'x_incomplete' },
      compensation_status: 'skipped',
    });
    expect(await runStatus(runId)).toBe('COMPENSATED');
    // The call never took effect: its compensation was never sent.
    expect(await effectsFor(h.raw, compensationKey(runId, 0, 'create_note'))).toEqual([]);
  });
});
