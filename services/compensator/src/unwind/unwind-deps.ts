import type { CrashPoint, InvariantChecker, Logger, SagaDb, ToolRegistry } from '@agent-saga/core';
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

/** How long an unknown outcome of a tool with `lookupLagMs` may wait for evidence before a person looks. */
export function unknownWaitMs(config: Readonly<CompensatorConfig>, lookupLagMs: number): number {
  return Math.max(
    config.COMPENSATOR_UNKNOWN_WAIT_FACTOR * lookupLagMs,
    config.COMPENSATOR_UNKNOWN_MIN_WAIT_MS,
  );
}
