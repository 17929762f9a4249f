import type { ExecuteDispatch } from '@agent-saga/core';
import { ClaimFailedError } from './claim-failed-error.js';
import { executeStep, type ExecuteStepDeps } from './execute-step.js';
import { createStepRunner } from './step-runner.js';

/**
 * The API's own executor (`SAGA_EXECUTE_INLINE=true`): the first attempt of a step the API has just
 * committed runs in the API process, with no BullMQ hop (no job added, picked up, locked and completed in
 * Redis, no second process woken), which is most of a call's cost and latency beyond the saga log itself.
 *
 * Why it is safe: it is {@link executeStep} as an executor runs it, with a lease owner of its own: the same
 * grouped claim (a compare-and-set that marks the outbox row published), the same tool call under the
 * tool's deadline and the same outcome record. The outbox stays the source of truth, as for the fast path:
 * a step this executor does not claim (at capacity, a claim that failed on a database error, the process
 * killed between the intake's commit and the claim) keeps its unpublished outbox row, which the relay
 * publishes after RELAY_GRACE_MS to the executor pool; a process killed after the claim leaves a lease that
 * lapses into the reconciler's lookup, exactly as an executor killed there does.
 *
 * What it trades: the API's event loop now also waits on tools, so pools no longer scale apart for these
 * calls. A deployment that scales executors on their own keeps the default (off): the API only enqueues.
 * The executor pool is still needed for re-dispatches, and for whatever the API leaves to the relay.
 */
export interface InlineExecutor {
  /** This process's lease owner id (as an executor's). */
  readonly workerId: string;
  /**
   * Runs the step's first attempt here, unless `concurrency` steps already run: then returns false and the
   * caller dispatches it as usual (the fast path's publish). Never throws; its outcome reaches waiters by
   * the outcome statement's NOTIFY, as an executor's does.
   */
  execute(d: ExecuteDispatch): boolean;
  /** Running steps now. */
  readonly size: number;
  /**
   * Waits for the running steps; after `drainMs` aborts their calls, which then record UNKNOWN (as an
   * executor's drain does).
   */
  close(drainMs: number): Promise<void>;
  /** Aborts the running calls now (a second SIGTERM). */
  abortRunning(): void;
}

export type InlineExecutorDeps = Omit<ExecuteStepDeps, 'workerId' | 'shutdownSignal' | 'groups'> & {
  /** Steps run at once at most; past it, calls are dispatched to the executor pool. */
  readonly concurrency: number;
};

export function createInlineExecutor(d: InlineExecutorDeps): InlineExecutor {
  const { workerId, deps, running, abortRunning } = createStepRunner(d, {
    concurrency: d.concurrency,
    role: 'api',
  });
  let closing = false;

  const run = async (dispatch: ExecuteDispatch): Promise<void> => {
    try {
      const result = await executeStep(deps, dispatch.data, dispatch.jobId);
      if (result.kind !== 'executed') d.metrics?.executions.inc({ tool: '(none)', outcome: result.kind });
    } catch (err) {
      // Before the tool (a database error on the claim): the outbox row is still unpublished, so the relay
      // hands the step to the executor pool after its grace. After the tool: the lease lapses into a lookup.
      const where = err instanceof ClaimFailedError ? 'claim failed; the relay will dispatch' : 'failed';
      d.logger.error(
        { err, runId: dispatch.data.runId, stepIdx: dispatch.data.stepIdx, key: dispatch.data.key },
        `inline execution ${where}`,
      );
    }
  };

  return {
    workerId,
    execute(dispatch) {
      if (closing || running.size >= d.concurrency) return false;
      void running.track(run(dispatch));
      return true;
    },
    get size() {
      return running.size;
    },
    async close(drainMs) {
      closing = true;
      const timer = setTimeout(abortRunning, drainMs);
      try {
        await running.idle();
      } finally {
        clearTimeout(timer);
      }
    },
    abortRunning,
  };
}
