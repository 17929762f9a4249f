/**
 * The one lookup rule (`settleFromLookup`): "not found" is believed only once the tool's commit horizon
 * (`commitHorizonMs`, default its `timeoutMs`) and then its `lookupLagMs` have passed since the last attempt
 * was sent, by the database's clock, and a re-check agrees; "found" is believed at once; the vendor's record
 * of the call refused under the key is believed past the same moment, after one lookup (or at once when the
 * last attempt was answered 500 by a vendor that dedupes by key: nothing is in flight); for a tool whose
 * vendor dedupes by key, a "not found" past only the lag lets the step be sent again (`resendable`), never
 * proving absence. Against a real
 * saga-log row whose `last_attempt_at` the database wrote (or the test set in SQL), and a tool whose search
 * index lags behind its writes.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'kysely';
import { z } from 'zod';
import {
  ClientError,
  claimStep,
  createLogger,
  decideLookupVerdict,
  defineTool,
  ref,
  refusedUnderKey,
  settleFromLookup,
  type LookupObservation,
  type RefusedUnderKey,
  type StepRow,
  type ToolEffect,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { resendAfterMs } from '../src/tools/lookup-lag.js';
import { intendedStep } from './intended-step.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('settle_lookup');
});
afterAll(async () => env?.close());
afterEach(() => vi.useRealTimers());

const log = createLogger({ level: 'silent', name: 'settle-from-lookup-test' });
// Why 10 min: far longer than any test runs, so "within the lag" cannot pass by itself mid-test.
const LAG_MS = 600_000;
// Why 5 min: a vendor that may commit a held request long after the client gave up; unlike LAG_MS, so a
// rule that forgot one of the two, or took the larger instead of the sum, answers another moment.
const HORIZON_MS = 300_000;
// Why 2 s: the tool's timeout, the default horizon; far below both, so the default is told apart.
const TIMEOUT_MS = 2_000;
// Why 200 ms: long enough to measure between the two lookups, short enough to keep the file fast.
const RECHECK_MS = 200;

/**
 * A stand-in vendor whose search lags its writes: an effect written under a key is found by `lookup` only
 * once the index has caught up, `indexedAfter` lookups later (0: at once; Infinity: never written).
 */
function laggingVendor(opts: {
  indexedAfter: number;
  duplicates?: readonly string[];
  fails?: boolean;
  /** The vendor's record of the call made under the key: it refused it (`refusedUnderKey`). */
  refuses?: ClientError;
  /** The tool's declared horizon (default HORIZON_MS); null declares none (its timeout then). */
  horizonMs?: number | null;
  /** The vendor makes at most one effect per key, whatever became of an earlier send (`dedupesByKey`). */
  dedupesByKey?: boolean;
}) {
  const asked: string[] = [];
  const tool = defineTool({
    name: 'create_ticket',
    class: 'compensatable',
    version: 1,
    args: z.object({ orderId: z.string() }),
    compensate: (_a: unknown, key: string) => ({ tool: 'create_ticket', args: { orderId: ref(key) } }),
    execute: () => Promise.resolve({ externalRef: 'SUP-1', result: {} }),
    lookup: (key): Promise<ToolEffect | RefusedUnderKey | null> => {
      asked.push(key);
      if (opts.fails) return Promise.reject(new Error('search is down (503)'));
      if (opts.refuses) return Promise.resolve(refusedUnderKey(opts.refuses));
      if (asked.length <= opts.indexedAfter) return Promise.resolve(null);
      return Promise.resolve({
        externalRef: 'SUP-1',
        result: { status: 'open' },
        ...(opts.duplicates ? { duplicates: opts.duplicates } : {}),
      });
    },
    lookupLagMs: LAG_MS,
    timeoutMs: TIMEOUT_MS,
    ...(opts.horizonMs === null ? {} : { commitHorizonMs: opts.horizonMs ?? HORIZON_MS }),
    ...(opts.dedupesByKey === undefined ? {} : { dedupesByKey: opts.dedupesByKey }),
  });
  return { tool, asked };
}

/** A step attempted once (claimed: `last_attempt_at = now()` by the database), optionally `agoMs` earlier. */
async function attemptedStep(runId: string, agoMs = 0): Promise<StepRow> {
  const key = (await intendedStep(env, runId)).idempotency_key;
  const claimed = await claimStep(env.db, {
    runId,
    stepIdx: 0,
    key,
    worker: 'w1',
    leaseMs: 10_000,
    jobId: key,
    schema: env.schema,
  });
  expect(claimed.kind).toBe('claimed');
  const r = await sql<StepRow>`
    UPDATE saga_log SET last_attempt_at = last_attempt_at - make_interval(secs => ${agoMs / 1000}::float8)
     WHERE idempotency_key = ${key} RETURNING *`.execute(env.db);
  return r.rows[0]!;
}

const settle = (
  tool: ReturnType<typeof laggingVendor>['tool'],
  step: StepRow,
  lastOutcome?: Pick<StepRow, 'attempts' | 'error'>,
) =>
  settleFromLookup({
    db: env.db,
    tool,
    target: step,
    lastAttemptAt: step.last_attempt_at!,
    ...(lastOutcome ? { lastOutcome } : {}),
    recheckMs: RECHECK_MS,
    log,
  });

describe('settleFromLookup', () => {
  it('is too early while the horizon runs: one lookup, no re-check, and when to look again from the row', async () => {
    const step = await attemptedStep('sl-early');
    const v = laggingVendor({ indexedAfter: Infinity });
    const s = await settle(v.tool, step);
    expect(s.verdict.kind).toBe('too-early');
    expect(v.asked).toEqual([step.idempotency_key]);
    // When to look again: the attempt as the database recorded it, plus the horizon, plus the lag.
    const expected = await sql<{ at: Date }>`
      SELECT last_attempt_at + make_interval(secs => ${(HORIZON_MS + LAG_MS) / 1000}::float8) AS at
        FROM saga_log WHERE idempotency_key = ${step.idempotency_key}`.execute(env.db);
    if (s.verdict.kind === 'too-early')
      expect(Math.abs(s.verdict.believableAt.getTime() - expected.rows[0]!.at.getTime())).toBeLessThan(2);
  });

  it('is too early past the lag but within horizon + lag: the effect may still be committed', async () => {
    // Sent longer ago than the lag, and than the horizon, but not than both: the old rule believed this.
    const step = await attemptedStep('sl-in-horizon', Math.max(LAG_MS, HORIZON_MS) + 60_000);
    const v = laggingVendor({ indexedAfter: Infinity });
    const s = await settle(v.tool, step);
    expect(s.verdict.kind).toBe('too-early');
    expect(v.asked).toHaveLength(1);
    if (s.verdict.kind !== 'too-early') return;
    expect(s.verdict.believableAt.getTime()).toBe(step.last_attempt_at!.getTime() + HORIZON_MS + LAG_MS);
    expect(s.lag).toEqual({ passed: false, believableAt: s.verdict.believableAt });
  });

  it('proves absence only past horizon + lag and when the re-check, made after the pause, agrees', async () => {
    const step = await attemptedStep('sl-absent', HORIZON_MS + LAG_MS + 60_000);
    const v = laggingVendor({ indexedAfter: Infinity });
    const s = await settle(v.tool, step);
    expect(s.verdict).toEqual({ kind: 'absent' });
    expect(v.asked).toHaveLength(2);
    expect(s.observations.map((o) => o.kind)).toEqual(['absent', 'absent']);
    const [first, second] = s.observations;
    expect(second!.at.getTime() - first!.at.getTime()).toBeGreaterThanOrEqual(RECHECK_MS - 5);
  });

  it('confirms an effect the index shows only on the re-check', async () => {
    const step = await attemptedStep('sl-late-index', HORIZON_MS + LAG_MS + 60_000);
    const v = laggingVendor({ indexedAfter: 1 });
    const s = await settle(v.tool, step);
    expect(s.verdict).toMatchObject({ kind: 'found', effect: { externalRef: 'SUP-1' }, duplicates: [] });
    expect(s.observations.map((o) => o.kind)).toEqual(['absent', 'found']);
  });

  it('believes "found" at once, within the horizon and the lag, and names every duplicate', async () => {
    const step = await attemptedStep('sl-found');
    const v = laggingVendor({ indexedAfter: 0, duplicates: ['SUP-2'] });
    const s = await settle(v.tool, step);
    expect(s.verdict).toMatchObject({ kind: 'found', duplicates: ['SUP-2'] });
    expect(v.asked).toHaveLength(1);
  });

  it('learns nothing from a failing lookup', async () => {
    const step = await attemptedStep('sl-fails', HORIZON_MS + LAG_MS + 60_000);
    const s = await settle(laggingVendor({ indexedAfter: 0, fails: true }).tool, step);
    expect(s.verdict).toMatchObject({ kind: 'lookup-error', error: { message: 'search is down (503)' } });
  });

  describe('a tool that declares no horizon: its timeout is the horizon', () => {
    it('is too early within timeout + lag of the attempt', async () => {
      const step = await attemptedStep('sl-default-early', LAG_MS + TIMEOUT_MS / 2);
      const v = laggingVendor({ indexedAfter: Infinity, horizonMs: null });
      const s = await settle(v.tool, step);
      expect(s.verdict).toEqual({
        kind: 'too-early',
        believableAt: new Date(step.last_attempt_at!.getTime() + TIMEOUT_MS + LAG_MS),
      });
    });

    it('proves absence past timeout + lag, with a re-check', async () => {
      const step = await attemptedStep('sl-default-absent', LAG_MS + TIMEOUT_MS + 1_000);
      const v = laggingVendor({ indexedAfter: Infinity, horizonMs: null });
      const s = await settle(v.tool, step);
      expect(s.verdict).toEqual({ kind: 'absent' });
      expect(v.asked).toHaveLength(2);
    });
  });

  describe('reads the database clock, never the process clock', () => {
    it('the attempt was long ago by the database while this process thinks it is 2000: absent', async () => {
      const step = await attemptedStep('sl-clock-behind', HORIZON_MS + LAG_MS + 60_000);
      // Only Date is faked (timers stay real, so the re-check pause still elapses).
      vi.useFakeTimers({ toFake: ['Date'], now: new Date('2000-01-01T00:00:00Z') });
      expect(new Date().getUTCFullYear()).toBe(2000);
      const s = await settle(laggingVendor({ indexedAfter: Infinity }).tool, step);
      // By the process clock the attempt (26 years "in the future") would still be within its lag.
      expect(s.verdict).toEqual({ kind: 'absent' });
    });

    it('the attempt was just now by the database while this process thinks it is 2100: too early', async () => {
      const step = await attemptedStep('sl-clock-ahead');
      vi.useFakeTimers({ toFake: ['Date'], now: new Date('2100-01-01T00:00:00Z') });
      const v = laggingVendor({ indexedAfter: Infinity });
      const s = await settle(v.tool, step);
      // By the process clock the lag would have passed 74 years ago, and the step would be re-sent.
      expect(s.verdict.kind).toBe('too-early');
      expect(v.asked).toHaveLength(1);
      if (s.verdict.kind === 'too-early')
        expect(s.verdict.believableAt.getTime()).toBe(step.last_attempt_at!.getTime() + HORIZON_MS + LAG_MS);
    });
  });

  describe('a lookup that finds the call refused under the key', () => {
    const refusal = () =>
      new ClientError('pi_1 was left requires_confirmation', {
        vendorCode: 'payment_intent_requires_confirmation',
      });

    it('is too early while the horizon runs: one lookup, no re-check, and when to look again', async () => {
      const step = await attemptedStep('sl-refused-early', LAG_MS + 60_000);
      const v = laggingVendor({ indexedAfter: Infinity, refuses: refusal() });
      const s = await settle(v.tool, step);
      // A request the vendor still holds may yet complete: the refusal is not believed before the horizon.
      expect(s.verdict).toEqual({
        kind: 'too-early',
        believableAt: new Date(step.last_attempt_at!.getTime() + HORIZON_MS + LAG_MS),
      });
      expect(v.asked).toEqual([step.idempotency_key]);
    });

    it('is refused past horizon + lag after one lookup, with the error the lookup gave', async () => {
      const step = await attemptedStep('sl-refused', HORIZON_MS + LAG_MS + 60_000);
      const error = refusal();
      const v = laggingVendor({ indexedAfter: Infinity, refuses: error });
      const s = await settle(v.tool, step);
      expect(s.verdict).toEqual({ kind: 'refused', error });
      if (s.verdict.kind === 'refused') expect(s.verdict.error).toBe(error);
      // The vendor's record was read, not missed by a lagging search: no re-check.
      expect(v.asked).toEqual([step.idempotency_key]);
      expect(s.observations.map((o) => o.kind)).toEqual(['refused']);
    });
  });
});

describe('decideLookupVerdict on a refusal', () => {
  const believableAt = new Date('2030-01-01T00:00:00Z');
  const error = new ClientError('vendor left it incomplete', { vendorCode: 'x_incomplete' });
  const refused: LookupObservation = { kind: 'refused', at: new Date(), ms: 3, error };

  it('is too early, with when to look again, before the horizon and the lag have passed', () => {
    expect(decideLookupVerdict([refused], { passed: false, believableAt })).toEqual({
      kind: 'too-early',
      believableAt,
    });
  });

  it('is refused, carrying the same ClientError, once they have', () => {
    const v = decideLookupVerdict([refused], { passed: true, believableAt });
    expect(v).toEqual({ kind: 'refused', error });
    if (v.kind === 'refused') expect(v.error).toBe(error);
  });

  it('is resendable before them when a re-send under the key is safe (the vendor replays its answer)', () => {
    expect(decideLookupVerdict([refused], { passed: false, believableAt }, true)).toEqual({
      kind: 'resendable',
      believableAt,
    });
    // An answered 500 still settles it at once, resend or not.
    expect(decideLookupVerdict([refused], { passed: false, believableAt }, true, true)).toEqual({
      kind: 'refused',
      error,
    });
  });
});

describe('resendAfterMs: when a "not found" lets a step be sent again under its key', () => {
  const tool = (dedupesByKey: boolean) => ({ dedupesByKey, lookupLagMs: 1_500 });

  it('does not apply to a tool whose vendor does not dedupe by key', () => {
    expect(resendAfterMs(tool(false), undefined)).toBeUndefined();
    expect(resendAfterMs(tool(false), { code: 'UPSTREAM_5XX' }, { retryAfterMs: 5_000 })).toBeUndefined();
  });

  it("is the tool's lookup lag for one that does, whatever else the stored error says", () => {
    expect(resendAfterMs(tool(true), undefined)).toBe(1_500);
    expect(resendAfterMs(tool(true), null)).toBe(1_500);
    expect(resendAfterMs(tool(true), { code: 'UPSTREAM_5XX', status: 504 })).toBe(1_500);
  });

  it('does not apply after a 409: the vendor holds an earlier send under the key', () => {
    expect(resendAfterMs(tool(true), { status: 409 })).toBeUndefined();
    expect(resendAfterMs(tool(true), { code: 'UPSTREAM_4XX', status: 409, attempt: 1 })).toBeUndefined();
  });

  it("waits for an answered 429's Retry-After when it is longer than the lag, and the lag when shorter", () => {
    expect(resendAfterMs(tool(true), { status: 429 }, { retryAfterMs: 4_000 })).toBe(4_000);
    expect(resendAfterMs(tool(true), { status: 429 }, { retryAfterMs: 200 })).toBe(1_500);
  });
});

describe('decideLookupVerdict on a "not found" of a tool whose vendor dedupes by key', () => {
  const believableAt = new Date('2030-01-01T00:00:00Z');
  const absent = (): LookupObservation => ({ kind: 'absent', at: new Date(), ms: 3 });

  it('is resendable, with when absence becomes believable, past the resend wait but not the horizon', () => {
    expect(decideLookupVerdict([absent()], { passed: false, believableAt }, true)).toEqual({
      kind: 'resendable',
      believableAt,
    });
  });

  it('is too early when the resend wait has not passed either (the default)', () => {
    expect(decideLookupVerdict([absent()], { passed: false, believableAt }, false)).toEqual({
      kind: 'too-early',
      believableAt,
    });
    expect(decideLookupVerdict([absent()], { passed: false, believableAt })).toEqual({
      kind: 'too-early',
      believableAt,
    });
  });

  it('is absent past the horizon and the lag with a re-check, whatever resendPassed says', () => {
    const lag = { passed: true, believableAt };
    expect(decideLookupVerdict([absent(), absent()], lag, true)).toEqual({ kind: 'absent' });
    expect(decideLookupVerdict([absent(), absent()], lag, false)).toEqual({ kind: 'absent' });
  });
});

describe('settleFromLookup on a tool whose vendor dedupes by key', () => {
  // Sent longer ago than the lag (600 s) but well within horizon + lag (900 s).
  const PAST_LAG_MS = LAG_MS + 60_000;

  it('is resendable past its lag within its horizon, after one lookup and no re-check', async () => {
    const step = await attemptedStep('sl-resend', PAST_LAG_MS);
    const v = laggingVendor({ indexedAfter: Infinity, dedupesByKey: true });
    const s = await settle(v.tool, step);
    // Absence is still not proved: the moment it would be is the attempt plus the horizon plus the lag.
    expect(s.verdict).toEqual({
      kind: 'resendable',
      believableAt: new Date(step.last_attempt_at!.getTime() + HORIZON_MS + LAG_MS),
    });
    expect(v.asked).toEqual([step.idempotency_key]);
    expect(s.observations.map((o) => o.kind)).toEqual(['absent']);
  });

  it('is too early within its lag', async () => {
    const step = await attemptedStep('sl-resend-early', LAG_MS / 2);
    const s = await settle(laggingVendor({ indexedAfter: Infinity, dedupesByKey: true }).tool, step);
    expect(s.verdict.kind).toBe('too-early');
  });

  it('is too early past its lag when the stored error is a 409: an earlier send is in flight', async () => {
    const step = await attemptedStep('sl-resend-409', PAST_LAG_MS);
    const v = laggingVendor({ indexedAfter: Infinity, dedupesByKey: true });
    const s = await settle(v.tool, step, { attempts: step.attempts, error: { status: 409 } });
    expect(s.verdict.kind).toBe('too-early');
  });

  it('is too early at the same moment for the same tool not deduping: the horizon still runs', async () => {
    const step = await attemptedStep('sl-no-dedupe', PAST_LAG_MS);
    const v = laggingVendor({ indexedAfter: Infinity, dedupesByKey: false });
    const s = await settle(v.tool, step);
    expect(s.verdict).toEqual({
      kind: 'too-early',
      believableAt: new Date(step.last_attempt_at!.getTime() + HORIZON_MS + LAG_MS),
    });
    expect(v.asked).toHaveLength(1);
  });
});

describe('settleFromLookup on a refusal under the key after an answered 500 (answeredUnderKey)', () => {
  const refusal = () =>
    new ClientError('pi_1 was left requires_confirmation', {
      vendorCode: 'payment_intent_requires_confirmation',
    });

  it('is refused at once, well inside the horizon, when the vendor dedupes by key', async () => {
    const step = await attemptedStep('sl-500-refused');
    const error = refusal();
    const v = laggingVendor({ indexedAfter: Infinity, refuses: error, dedupesByKey: true });
    const s = await settle(v.tool, step, { attempts: 1, error: { status: 500, attempt: 1 } });
    expect(s.lag.passed).toBe(false);
    expect(s.verdict).toEqual({ kind: 'refused', error });
    expect(v.asked).toEqual([step.idempotency_key]);
  });

  it('is too early after an answered 504: a gateway may answer while the vendor still works', async () => {
    const step = await attemptedStep('sl-504-refused');
    const v = laggingVendor({ indexedAfter: Infinity, refuses: refusal(), dedupesByKey: true });
    const s = await settle(v.tool, step, { attempts: 1, error: { status: 504, attempt: 1 } });
    expect(s.verdict).toEqual({
      kind: 'too-early',
      believableAt: new Date(step.last_attempt_at!.getTime() + HORIZON_MS + LAG_MS),
    });
  });

  it('is resendable past the lag when nobody saw the last send end (a lapsed lease): no answer stored', async () => {
    const step = await attemptedStep('sl-lapsed-refused', LAG_MS + 60_000);
    const v = laggingVendor({ indexedAfter: Infinity, refuses: refusal(), dedupesByKey: true });
    const s = await settle(v.tool, step, { attempts: 1, error: null });
    expect(s.verdict).toEqual({
      kind: 'resendable',
      believableAt: new Date(step.last_attempt_at!.getTime() + HORIZON_MS + LAG_MS),
    });
    // Not when the vendor said an earlier send under the key is still in flight.
    const inFlight = await settle(v.tool, step, { attempts: 1, error: { status: 409, attempt: 1 } });
    expect(inFlight.verdict.kind).toBe('too-early');
  });

  it('is too early after an answered 500 when the vendor does not dedupe by key', async () => {
    const step = await attemptedStep('sl-500-no-dedupe');
    const v = laggingVendor({ indexedAfter: Infinity, refuses: refusal(), dedupesByKey: false });
    const s = await settle(v.tool, step, { attempts: 1, error: { status: 500, attempt: 1 } });
    expect(s.verdict).toEqual({
      kind: 'too-early',
      believableAt: new Date(step.last_attempt_at!.getTime() + HORIZON_MS + LAG_MS),
    });
  });
});
