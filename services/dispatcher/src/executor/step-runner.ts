import { setMaxListeners } from 'node:events';
import { createRunningWork, newWorkerId, OutcomeUnknownError, type RunningWork } from '@agent-saga/core';
import { leasePlan, type ExecuteStepDeps } from './execute-step.js';
import { createExecutorGroups } from './executor-groups.js';

/**
 * What runs steps in one process, whoever delivers them (BullMQ to an executor, or the API's own commits
 * with SAGA_EXECUTE_INLINE): a lease owner id, the grouped claim and outcome statements of its concurrent
 * steps, the shutdown signal every running call listens on, and the set of steps running now, which a
 * drain waits for.
 */
export interface StepRunner {
  readonly workerId: string;
  /** What `executeStep` needs, for every step this runner runs. */
  readonly deps: ExecuteStepDeps;
  readonly running: RunningWork;
  /** Aborts the running calls (their signal): they end and record UNKNOWN. */
  readonly abortRunning: () => void;
}

export function createStepRunner(
  d: Omit<ExecuteStepDeps, 'workerId' | 'shutdownSignal' | 'groups'>,
  o: {
    /** Steps run at once at most: every one listens on the shutdown signal until it ends. */
    readonly concurrency: number;
    /** Who is shutting down, in the UNKNOWN outcome of an aborted call (`executor`, `api`). */
    readonly role: string;
    /**
     * The lease owner id, when the process proves its liveness under it (`holdWorkerLiveness`: its leases
     * lapse the moment it dies); otherwise a new plain one, whose leases only run out.
     */
    readonly workerId?: string;
  },
): StepRunner {
  const shutdown = new AbortController();
  setMaxListeners(o.concurrency + 1, shutdown.signal);
  const workerId = o.workerId ?? newWorkerId();
  const leases = leasePlan(d);
  const groups = createExecutorGroups({
    db: d.groupDb ?? d.db,
    workerId,
    schema: d.config.SAGA_DB_SCHEMA,
    leaseMsByTool: leases.leaseMsByTool,
    defaultLeaseMs: leases.defaultLeaseMs,
  });
  return {
    workerId,
    deps: { ...d, workerId, shutdownSignal: shutdown.signal, groups },
    running: createRunningWork(),
    abortRunning: () =>
      shutdown.abort(new OutcomeUnknownError(`${o.role} shut down while the call was running`)),
  };
}
