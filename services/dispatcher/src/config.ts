import { z } from 'zod';
import {
  baseConfigSchema,
  envInt,
  DEFAULT_MAX_STEPS_PER_RUN,
  MAX_STEPS_PER_RUN_CEILING,
  parseConfig,
  redispatchBudgetConfig,
  sagaLogGaugesConfig,
} from '@agent-saga/core';

/**
 * The longest a call may wait for its step to settle (`waitMs` at most this); the HTTP timeouts below are
 * set against it. Why 60 s: a model's tool call should not hang longer.
 */
export const MAX_WAIT_MS = 60_000;

/**
 * Configuration of every dispatcher role (api, relay, executor), parsed once at start. Each role reads only
 * what it needs, but one schema keeps the variable names in one place.
 */
export const dispatcherConfigSchema = baseConfigSchema.extend({
  /** Path of the ES module whose default export is the array of tools. */
  SAGA_TOOLS: z.string().min(1),
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Concurrent jobs per executor process. */
  EXECUTOR_CONCURRENCY: envInt(50),
  /** Outbox rows a relay claims per batch. */
  RELAY_BATCH_SIZE: envInt(100),
  /** The relay's fallback poll when no NOTIFY arrives, in ms. */
  RELAY_POLL_MS: envInt(1_000),
  /** How long the API waits for a step to settle when the call names no `waitMs`. */
  CALL_WAIT_DEFAULT_MS: envInt(10_000),
  /** Pause before a lookup's "not found" is checked once more (search indexes lag). */
  LOOKUP_RECHECK_MS: envInt(1_000),
  /** Extra lease time beyond a tool's timeout, so a live executor always records before its lease ends. */
  LEASE_MARGIN_MS: envInt(5_000),
  /**
   * Fast path: the API adds the BullMQ job itself right after its commit, for latency. The outbox stays the
   * source of truth: the relay sweeps rows still unpublished after RELAY_GRACE_MS.
   */
  SAGA_FAST_PATH: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  RELAY_GRACE_MS: z.coerce.number().int().min(0).default(2_000),
  /**
   * How long the API's fast-path publish may take before the call stops waiting for it and leaves the
   * outbox row to the relay (which sweeps it after RELAY_GRACE_MS). Why 500 ms: a queue add takes about a
   * millisecond; while Redis is down, a call must still answer within its `waitMs` plus about this.
   */
  FAST_PATH_PUBLISH_TIMEOUT_MS: envInt(500),
  /**
   * The API runs the first attempt of each step it commits itself, up to EXECUTOR_CONCURRENCY at once,
   * instead of adding a BullMQ job for an executor (see `inline-executor.ts`): less CPU and latency per
   * call, but the API's processes then wait on tools, so the pools no longer scale apart. Off by default.
   * Needs the fast path (the relay leaves the API's fresh outbox rows alone for RELAY_GRACE_MS) and the
   * tool module's vendor settings in the API's environment; executors are still needed for re-dispatches
   * and for what the API leaves to the relay.
   */
  SAGA_EXECUTE_INLINE: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /**
   * How long a relay holds the outbox rows it claimed before another relay may claim them again, in ms.
   * Why 30 s: far beyond the relay's bounded publish (twice REDIS_COMMAND_TIMEOUT_MS) and its mark, so a
   * live relay always marks in time; a relay that died holding a claim delays those rows by at most this
   * (publishing them twice is a no-op: the job id is deterministic).
   */
  RELAY_CLAIM_LEASE_MS: envInt(30_000),
  /**
   * The saga-log gauges from a relay or executor process: off by default (the reconciler exports them).
   * The API always exports the UNKNOWN backlog only, as before.
   */
  ...sagaLogGaugesConfig(false),
  /** Database pool size per process. */
  DB_POOL_SIZE: envInt(20),
  /**
   * BullMQ lock of an executor's active job, in ms. A worker renews it at half this while the job runs; a
   * worker killed mid-job loses it, and after it lapses another worker's stalled check redelivers the job
   * (whose claim then finds the step's lease and does not run the tool twice). BullMQ's default.
   */
  EXECUTOR_LOCK_MS: envInt(30_000),
  /** How often an executor looks for stalled jobs (locks lapsed), in ms. BullMQ's default. */
  EXECUTOR_STALLED_INTERVAL_MS: envInt(30_000),
  /**
   * On SIGTERM the executor waits this long for running calls to finish, then aborts their signals so they
   * record UNKNOWN rather than being cut off half-written. Default: the default tool timeout.
   */
  EXECUTOR_DRAIN_MS: envInt(30_000),
  /** The relay gathers NOTIFYs for this long before it sweeps, so a burst of intents is one batch. */
  RELAY_DEBOUNCE_MS: z.coerce.number().int().min(0).default(2),
  /**
   * How long a person has to decide an approval (a pivot, or a held step) before it expires, in ms. A
   * pivot that stages a hold (`holdWindowMs`) expires earlier, before the hold lapses. Default: a day.
   */
  APPROVAL_TTL_MS: envInt(24 * 3600_000),
  /**
   * SAGA_MAX_REDISPATCHES: re-dispatches of a step proven NOT_EXECUTED before a person decides, once the
   * first is SAGA_REDISPATCH_MIN_SPAN_MS old (core's `redispatchBudgetSpent`).
   */
  ...redispatchBudgetConfig(),
  /**
   * The cap on steps per run: a run holds step indices `0 … SAGA_MAX_STEPS_PER_RUN - 1`. A `stepIdx` or
   * `dependsOn` entry past it is 400 BAD_REQUEST, a new step at a full run's cursor 409 STEP_LIMIT; both
   * write nothing. At most 100,000, so no index can overflow the int4 column.
   */
  SAGA_MAX_STEPS_PER_RUN: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_STEPS_PER_RUN_CEILING)
    .default(DEFAULT_MAX_STEPS_PER_RUN),
  /**
   * Requests per minute one API token may send to `/v1` (a token bucket of this many, refilled evenly over
   * the minute), past which the API answers 429 RATE_LIMITED with `Retry-After`; 0 turns the limit off.
   * Why 60,000 (1,000 a second, sustained): far above what an agent loop sends (a call waits for its tool),
   * so only a runaway loop or a leaked token meets it, while it still bounds what one token can make the
   * API do. The benchmark drives one token at thousands a second: it sets 0.
   */
  SAGA_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(60_000),
  /**
   * How long a client may take to send a whole request (headers and body), in ms; past it the request is
   * answered 408 and its connection closed (node's `requestTimeout`). Why 30 s: the largest body (1 MiB) at
   * 35 KiB/s; only a stalled or deliberately slow client takes longer. It does not bound the answer: a call
   * waits for its step (up to MAX_WAIT_MS) after its request was read.
   */
  HTTP_REQUEST_TIMEOUT_MS: envInt(30_000),
  /**
   * How long a connection may stay silent (no byte either way) before it is closed, in ms (Fastify's
   * `connectionTimeout`). Must exceed MAX_WAIT_MS, the silence of a call waiting for its step; why 90 s:
   * MAX_WAIT_MS plus the fast path's publish bound and the final read, with room to spare.
   */
  HTTP_CONNECTION_TIMEOUT_MS: envInt(MAX_WAIT_MS + 30_000).refine((ms) => ms > MAX_WAIT_MS, {
    message: `must exceed MAX_WAIT_MS (${MAX_WAIT_MS}): a call may wait that long without a byte sent`,
  }),
  /**
   * How long an idle keep-alive connection stays open after an answer, in ms. Why 72 s (Fastify's default):
   * longer than the 60 s idle timeout of common load balancers, so the balancer closes first and never
   * sends a request onto a socket the API is closing.
   */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: envInt(72_000),
});
export type DispatcherConfig = z.infer<typeof dispatcherConfigSchema>;

export function loadDispatcherConfig(
  env: Record<string, string | undefined> = process.env,
): Readonly<DispatcherConfig> {
  return parseConfig(
    dispatcherConfigSchema.superRefine((c, ctx) => {
      if (c.SAGA_EXECUTE_INLINE && !c.SAGA_FAST_PATH)
        ctx.addIssue({
          code: 'custom',
          path: ['SAGA_EXECUTE_INLINE'],
          message: 'needs SAGA_FAST_PATH=true (the relay must leave the API its fresh outbox rows)',
        });
    }),
    env,
  );
}
