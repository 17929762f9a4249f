import { z } from 'zod';
import {
  baseConfigSchema,
  envInt,
  parseConfig,
  RECOVERY_APPROVAL_TTL_MS,
  sagaLogGaugesConfig,
} from '@agent-saga/core';

/** Configuration of a compensator process, parsed once at start (see README: "Running the compensator"). */
export const compensatorConfigSchema = baseConfigSchema.extend({
  /** Unused: a compensator needs Postgres alone (its runs are taken by advisory lock, not from a queue). */
  REDIS_URL: z.string().url().optional(),
  /** Path of the ES module whose default export is the array of tools (the dispatcher's module). */
  SAGA_TOOLS: z.string().min(1),
  /** Runs unwound at once per process. */
  COMPENSATOR_CONCURRENCY: envInt(10),
  /** Compensations of one run sent at once (independent branches only; dependency order always holds). */
  COMPENSATOR_PARALLELISM: envInt(4),
  /** Fallback sweep of COMPENSATING runs when no NOTIFY arrives (a lost wake-up, a crashed peer), in ms. */
  COMPENSATOR_SWEEP_MS: envInt(2_000),
  /** How often a run waiting on a backoff or a lease looks again, in ms. */
  COMPENSATOR_POLL_MS: envInt(250),
  /** How long one slice drives a run before releasing it to the next sweep (keeps slices short), in ms. */
  COMPENSATOR_SLICE_MS: envInt(60_000),
  /**
   * How long a compensation held for a person (run policy `approveMoneyAbove`, `approveDeletions`) or a
   * renewal of a run's lapsed authority waits for a decision before it expires (a refusal), in ms. The
   * dispatcher's held steps read the same variable.
   */
  APPROVAL_TTL_MS: envInt(RECOVERY_APPROVAL_TTL_MS),
  /** Attempts of one compensation (same key every time) before the run needs a person. */
  COMPENSATION_MAX_ATTEMPTS: envInt(5),
  /** First backoff after a refused attempt; doubles each attempt, with jitter, up to the cap. In ms. */
  COMPENSATION_BACKOFF_MS: envInt(1_000),
  COMPENSATION_BACKOFF_MAX_MS: envInt(60_000),
  /** Lease of an attempt beyond its tool's timeout, so a live compensator always records in time. */
  COMPENSATOR_LEASE_MARGIN_MS: envInt(5_000),
  /** Pause before a lookup's "not found" is checked once more. */
  LOOKUP_RECHECK_MS: envInt(1_000),
  /**
   * An unknown step (forward or compensation) waits this many times its tool's lookupLagMs, but at least
   * COMPENSATOR_UNKNOWN_MIN_WAIT_MS, before it goes to a person. The default is three.
   */
  COMPENSATOR_UNKNOWN_WAIT_FACTOR: envInt(3),
  COMPENSATOR_UNKNOWN_MIN_WAIT_MS: envInt(30_000),
  /** On SIGTERM, how long running compensations may take before they are aborted (and record unknown). */
  COMPENSATOR_DRAIN_MS: envInt(30_000),
  DB_POOL_SIZE: envInt(10),
  /** The saga-log gauges: off here by default (the reconciler exports them); switch on for one pool only. */
  ...sagaLogGaugesConfig(false),
});
export type CompensatorConfig = z.infer<typeof compensatorConfigSchema>;

export function loadCompensatorConfig(
  env: Record<string, string | undefined> = process.env,
): Readonly<CompensatorConfig> {
  return parseConfig(compensatorConfigSchema, env);
}
