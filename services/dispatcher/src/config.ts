import { z } from 'zod';
import {
  baseConfigSchema,
  envInt,
  parseConfig,
  redispatchBudgetConfig,
  sagaLogGaugesConfig,
} from '@agent-saga/core';

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
   * How long a relay holds the outbox rows it claimed before another relay may claim them again, in ms.
   * Why 30 s: far beyond the relay's bounded publish (twice REDIS_COMMAND_TIMEOUT_MS) and its mark, so a
   * live relay always marks in time; a relay that died holding a claim delays those rows by at most this
   * (publishing them twice is a no-op: the job id is deterministic).
   */
  RELAY_CLAIM_LEASE_MS: envInt(30_000),
  /** Port of the metrics endpoint of relay and executor processes (0: none). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(0),
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
  /** SAGA_MAX_REDISPATCHES: re-dispatches of a step proven NOT_EXECUTED before a person decides. */
  ...redispatchBudgetConfig(),
});
export type DispatcherConfig = z.infer<typeof dispatcherConfigSchema>;

export function loadDispatcherConfig(
  env: Record<string, string | undefined> = process.env,
): Readonly<DispatcherConfig> {
  return parseConfig(dispatcherConfigSchema, env);
}
