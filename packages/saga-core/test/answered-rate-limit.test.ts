/**
 * The lookup rule's one exception to the commit horizon: a last attempt the vendor answered with 429
 * (`answered-rate-limit.ts`). Nothing is in flight after an answer, so "not found" is believable once the
 * answer (bounded by the tool's timeout) and the larger of the lookup lag and `Retry-After` have passed —
 * and only for the step's last attempt, only for a 429, only when the stored error says which attempt it
 * answered. Against a real saga-log row whose `last_attempt_at` the database wrote.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { z } from 'zod';
import {
  absenceEvidenceAfterMs,
  claimStep,
  classifyToolError,
  createLogger,
  defineTool,
  OutcomeUnknownError,
  ref,
  settleFromLookup,
  type StepRow,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { answeredRateLimitOf } from '../src/tools/answered-rate-limit.js';
import { intendedStep } from './intended-step.js';

// Why these: a horizon far above the timeout (a Jira-like vendor without idempotency), a lag below the
// Retry-After of some cases and above others, each distinct so that a rule mixing them answers otherwise.
const TIMEOUT_MS = 2_000;
const HORIZON_MS = 300_000;
const LAG_MS = 800;

const ticketTool = (commitHorizonMs: number) =>
  defineTool({
    name: 'create_ticket',
    class: 'compensatable',
    version: 1,
    args: z.object({ orderId: z.string() }),
    compensate: (_a: unknown, key: string) => ({ tool: 'create_ticket', args: { orderId: ref(key) } }),
    execute: () => Promise.resolve({ externalRef: 'SUP-1', result: {} }),
    lookup: () => Promise.resolve(null),
    lookupLagMs: LAG_MS,
    timeoutMs: TIMEOUT_MS,
    commitHorizonMs,
  });
const tool = ticketTool(HORIZON_MS);

/** What a connector throws for an answered failure (see `HttpOutcomeUnknownError` in the connectors). */
class AnsweredError extends OutcomeUnknownError {
  constructor(
    readonly status: number,
    readonly attempt: number | undefined,
    readonly retryAfterMs?: number,
  ) {
    super(`vendor: HTTP ${status}`);
  }
}

/** The stored error of an attempt, as the executor writes it (`classifyToolError`). */
const stored = (err: unknown) => classifyToolError(err).error as unknown as Record<string, unknown>;

describe('answeredRateLimitOf', () => {
  it('reads an answered 429 of the last attempt, with its Retry-After', () => {
    const error = stored(new AnsweredError(429, 2, 5_000));
    expect(error).toMatchObject({ status: 429, attempt: 2, retryAfterMs: 5_000 });
    expect(answeredRateLimitOf({ attempts: 2, error })).toEqual({ retryAfterMs: 5_000 });
    expect(answeredRateLimitOf({ attempts: 1, error: stored(new AnsweredError(429, 1)) })).toEqual({
      retryAfterMs: 0,
    });
  });

  it('ignores a 429 of an earlier attempt: the error outlives a re-dispatch', () => {
    expect(answeredRateLimitOf({ attempts: 3, error: stored(new AnsweredError(429, 2)) })).toBeUndefined();
  });

  it('ignores a 429 that does not say which attempt it answered, a 5xx, a timeout, and no error', () => {
    expect(
      answeredRateLimitOf({ attempts: 1, error: stored(new AnsweredError(429, undefined)) }),
    ).toBeUndefined();
    for (const status of [500, 502, 503, 504, 409, 408])
      expect(
        answeredRateLimitOf({ attempts: 1, error: stored(new AnsweredError(status, 1)) }),
      ).toBeUndefined();
    const timedOut = classifyToolError(new AnsweredError(429, 1), 'timeout').error;
    expect(timedOut).toMatchObject({ code: 'TOOL_TIMEOUT' });
    expect(answeredRateLimitOf({ attempts: 1, error: null })).toBeUndefined();
    expect(answeredRateLimitOf(undefined)).toBeUndefined();
  });
});

describe('absenceEvidenceAfterMs of an answered 429', () => {
  it('replaces the horizon by the timeout, then waits the larger of the lag and Retry-After', () => {
    expect(absenceEvidenceAfterMs(tool)).toBe(HORIZON_MS + LAG_MS);
    expect(absenceEvidenceAfterMs(tool, { retryAfterMs: 0 })).toBe(TIMEOUT_MS + LAG_MS);
    expect(absenceEvidenceAfterMs(tool, { retryAfterMs: 5_000 })).toBe(TIMEOUT_MS + 5_000);
  });

  it('never waits longer than without the answer, whatever Retry-After asks', () => {
    expect(absenceEvidenceAfterMs(tool, { retryAfterMs: 3_600_000 })).toBe(HORIZON_MS + LAG_MS);
  });

  it('never waits less than a horizon shorter than the timeout would', () => {
    const quick = ticketTool(500);
    expect(absenceEvidenceAfterMs(quick, { retryAfterMs: 0 })).toBe(500 + LAG_MS);
  });
});

describe('settleFromLookup with the last outcome', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await createTestEnv('answered_rate_limit');
  });
  afterAll(async () => env?.close());
  const log = createLogger({ level: 'silent', name: 'answered-rate-limit-test' });

  /** A step attempted once, `agoMs` ago by the database's clock, whose attempt stored `error`. */
  async function attempted(runId: string, agoMs: number, error: unknown): Promise<StepRow> {
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
      UPDATE saga_log SET last_attempt_at = last_attempt_at - make_interval(secs => ${agoMs / 1000}::float8),
             error = ${JSON.stringify(error)}::jsonb
       WHERE idempotency_key = ${key} RETURNING *`.execute(env.db);
    return r.rows[0]!;
  }

  const settle = (step: StepRow, withOutcome: boolean) =>
    settleFromLookup({
      db: env.db,
      tool,
      target: step,
      lastAttemptAt: step.last_attempt_at!,
      ...(withOutcome ? { lastOutcome: step } : {}),
      recheckMs: 50,
      log,
    });

  it('believes "not found" after an answered 429 once the timeout and the lag passed, long before the horizon', async () => {
    const step = await attempted('arl-429', TIMEOUT_MS + LAG_MS + 500, stored(new AnsweredError(429, 1)));
    const s = await settle(step, true);
    expect(s.verdict).toEqual({ kind: 'absent' });
    expect(s.observations).toHaveLength(2);
    // Without the step's outcome the rule cannot know, and keeps the horizon.
    expect((await settle(step, false)).verdict.kind).toBe('too-early');
  });

  it('still waits for Retry-After when the vendor asked for longer than the lag', async () => {
    const step = await attempted(
      'arl-retry-after',
      TIMEOUT_MS + LAG_MS + 500,
      stored(new AnsweredError(429, 1, 60_000)),
    );
    const s = await settle(step, true);
    expect(s.verdict.kind).toBe('too-early');
    const wait = s.lag.believableAt.getTime() - step.last_attempt_at!.getTime();
    expect(wait).toBe(TIMEOUT_MS + 60_000);
  });

  it('keeps the horizon after an answered 503', async () => {
    const step = await attempted('arl-503', TIMEOUT_MS + LAG_MS + 500, stored(new AnsweredError(503, 1)));
    const s = await settle(step, true);
    expect(s.verdict.kind).toBe('too-early');
    expect(s.lag.believableAt.getTime() - step.last_attempt_at!.getTime()).toBe(HORIZON_MS + LAG_MS);
  });
});
