import { z } from 'zod';
import {
  baseConfigSchema,
  DEFAULT_STALE_OUTBOX_MS,
  DEFAULT_STUCK_RUN_MS,
  DEFAULT_PRUNE_BATCH_SIZE,
  DEFAULT_UNCLAIMED_REPUBLISH_MS,
  envInt,
  parseConfig,
  redispatchBudgetConfig,
  retentionAgeSchema,
  sagaLogGaugesConfig,
} from '@agent-saga/core';

/**
 * Configuration of a reconciler process, parsed once at start. Defaults suit production; tests shorten the
 * intervals.
 */
export const reconcilerConfigSchema = baseConfigSchema.extend({
  /** Path of the ES module whose default export is the array of tools (the same module the executors load). */
  SAGA_TOOLS: z.string().min(1),
  /** How often a sweep looks for unsettled steps, in ms. A few seconds: an UNKNOWN costs an agent a wait. */
  RECONCILER_SWEEP_MS: envInt(5_000),
  /** Steps one process looks up at once (and the BullMQ worker's concurrency). */
  RECONCILER_CONCURRENCY: envInt(8),
  /** Pause before a lookup's "not found" is checked once more (search indexes lag). As the dispatcher's. */
  LOOKUP_RECHECK_MS: envInt(1_000),
  /** Failed lookups of one step before it goes to MANUAL_INTERVENTION. */
  RECONCILER_MAX_LOOKUP_ERRORS: envInt(10),
  /**
   * Age (since the step's last attempt was sent) past which a step whose lookups fail goes to
   * MANUAL_INTERVENTION even within the retry budget. A day: long enough to outlast a vendor's outage.
   */
  RECONCILER_MAX_UNKNOWN_AGE_MS: envInt(24 * 3600_000),
  /** First backoff after a failed lookup; doubles with each further failure, with jitter. */
  RECONCILER_BACKOFF_BASE_MS: envInt(1_000),
  /** Longest backoff between lookups of one step. */
  RECONCILER_BACKOFF_MAX_MS: envInt(5 * 60_000),
  /** Slack added to a reconcile lease beyond two lookup timeouts and the re-check pause. */
  RECONCILER_LEASE_MARGIN_MS: envInt(5_000),
  /** A run in a non-terminal state with no change for this long counts as stuck. */
  RECONCILER_STUCK_RUN_MS: envInt(DEFAULT_STUCK_RUN_MS),
  /** An outbox message still unpublished after this long counts as stale (the relay is behind or down). */
  RECONCILER_STALE_OUTBOX_MS: envInt(DEFAULT_STALE_OUTBOX_MS),
  /** How often stuck runs and stale outbox messages are looked for and logged, in ms. */
  RECONCILER_SCAN_MS: envInt(30_000),
  /** The saga-log gauges (runs by status, backlogs, approvals, …): exported by the reconciler by default. */
  ...sagaLogGaugesConfig(true),
  /** Database pool size of the process. */
  DB_POOL_SIZE: envInt(10),
  /**
   * SAGA_MAX_REDISPATCHES: re-dispatches of a step proven NOT_EXECUTED before a person decides, once the
   * first is SAGA_REDISPATCH_MIN_SPAN_MS old (core's `redispatchBudgetSpent`).
   */
  ...redispatchBudgetConfig(),
  /**
   * An INTENDED step still unclaimed this long after its latest dispatch was published is published again
   * under a fresh job id (Redis lost the job, or it failed before its claim). See
   * `DEFAULT_UNCLAIMED_REPUBLISH_MS` for the why of the default.
   */
  SAGA_UNCLAIMED_REPUBLISH_MS: envInt(DEFAULT_UNCLAIMED_REPUBLISH_MS),
  /**
   * Retention (`services/reconciler/src/retention/`): published outbox rows and step events of final runs
   * older than this age (`30d`, `12h`: core's `parseRetentionAge`) are deleted on a schedule, by the same
   * function as `agent-saga prune`. Unset (the default): no retention job; read here into milliseconds.
   */
  SAGA_PRUNE_OLDER_THAN: retentionAgeSchema.optional(),
  /**
   * How often the retention job runs, in ms. Why an hour: a day's worth of rows is then pruned in 24 small
   * passes rather than one large one, and one pass that finds nothing costs one walk of the index.
   */
  SAGA_PRUNE_INTERVAL_MS: envInt(3_600_000),
  /** Rows per DELETE statement of the retention job (core's `DEFAULT_PRUNE_BATCH_SIZE`). */
  SAGA_PRUNE_BATCH_SIZE: envInt(DEFAULT_PRUNE_BATCH_SIZE),
});
export type ReconcilerConfig = z.infer<typeof reconcilerConfigSchema>;

export function loadReconcilerConfig(
  env: Record<string, string | undefined> = process.env,
): Readonly<ReconcilerConfig> {
  return parseConfig(reconcilerConfigSchema, env);
}
