import {
  absenceEvidenceAfterMs,
  type CrashPoint,
  type InvariantChecker,
  type Logger,
  type LookupTimings,
  type SagaDb,
  type ToolRegistry,
} from '@agent-saga/core';
import type { CompensatorConfig } from '../config.js';
import type { CompensatorMetrics } from '../metrics/compensator-metrics.js';
import type { UnwindGroups } from './unwind-groups.js';

/** What the unwind of a run is made from, passed explicitly (no module state). */
export interface UnwindDeps {
  readonly db: SagaDb;
  readonly schema: string;
  readonly registry: ToolRegistry;
  readonly config: Readonly<CompensatorConfig>;
  /** This process's lease owner id. */
  readonly workerId: string;
  /** The statements this process's unwinds share (`createUnwindGroups(db, workerId)`). */
  readonly groups: UnwindGroups;
  readonly crash: (point: CrashPoint) => void;
  readonly logger: Logger;
  /** Fires when the process gives up draining: running compensations stop and record unknown. */
  readonly shutdownSignal: AbortSignal;
  /** Checks a bound run's invariant before it is called COMPENSATED (absent: such a run is not ended). */
  readonly invariants?: InvariantChecker;
  /** Counters of this process (absent in a process without a metrics endpoint). */
  readonly metrics?: CompensatorMetrics;
}

/**
 * How long an unknown outcome of `tool` may wait for evidence, from its last attempt, before a person looks:
 * COMPENSATOR_UNKNOWN_WAIT_FACTOR times its `lookupLagMs`, at least COMPENSATOR_UNKNOWN_MIN_WAIT_MS, and
 * never before a "not found" could be believed and re-checked (core's `absenceEvidenceAfterMs`: the tool's
 * commit horizon plus its lag, then LOOKUP_RECHECK_MS). Why the last bound: until then waiting can still
 * prove the outcome either way (a held request committing late is found; one past the horizon is absent),
 * so a person asked earlier is asked what the log would have told them (a Jira create held by its vendor
 * declares a horizon of minutes, `JIRA_COMMIT_HORIZON_MS`). `tool` absent (not registered here): the
 * configured minimum.
 */
export function unknownWaitMs(config: Readonly<CompensatorConfig>, tool: LookupTimings | undefined): number {
  if (!tool) return config.COMPENSATOR_UNKNOWN_MIN_WAIT_MS;
  return Math.max(
    config.COMPENSATOR_UNKNOWN_WAIT_FACTOR * tool.lookupLagMs,
    config.COMPENSATOR_UNKNOWN_MIN_WAIT_MS,
    absenceEvidenceAfterMs(tool) + config.LOOKUP_RECHECK_MS,
  );
}
