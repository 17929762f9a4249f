import {
  INTAKE_CLAIM_CAUSE,
  storedTrace,
  type AnyTool,
  type ExecuteDispatch,
  type IntakeClaim,
  type StepRow,
} from '@agent-saga/core';
import { ClaimFailedError } from './claim-failed-error.js';
import { executeStep, leasePlan, runClaimedStep, type ExecuteStepDeps } from './execute-step.js';
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
 * Claimed at intake: for a call the grouped intake writes (a new step at a named index), the API first
 * takes a slot here ({@link InlineExecutor.reserve}) and the intake writes the step already claimed under
 * this executor's lease (core's `IntakeClaim`: no claim statement, no outbox message); the slot then runs the
 * attempt and hands the recorded row straight to the waiting request (no NOTIFY round trip for it). Its
 * crash recovery is an executor's after its claim: the lease lapses into the reconciler's lookup.
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
  /**
   * A slot for a step the intake is about to write claimed, or null at capacity or while closing. Exactly
   * one of `run` (with the row the intake wrote under `claim`) or `release` (the intake wrote none, or
   * wrote it unclaimed) must follow.
   */
  reserve(tool: AnyTool): InlineSlot | null;
  /** Running (and reserved) steps now. */
  readonly size: number;
  /**
   * Waits for the running steps; after `drainMs` aborts their calls, which then record UNKNOWN (as an
   * executor's drain does).
   */
  close(drainMs: number): Promise<void>;
  /** Aborts the running calls now (a second SIGTERM). */
  abortRunning(): void;
}

/** A place in the inline executor, held from before the intake until the attempt has been recorded. */
export interface InlineSlot {
  /** What the intake writes the step with. */
  readonly claim: IntakeClaim;
  /**
   * Makes the attempt of `row` (written claimed under `claim`) and resolves the row as the outcome left it
   * (CONFIRMED, FAILED, UNKNOWN), or null when nothing was recorded here (the step had moved on, or a
   * database error after the call: the lease then lapses into the reconciler's lookup). Never rejects.
   * `deliverTo` is asked once, just before the outcome is recorded: true means the caller still waits and
   * will answer with the resolved row, so a settled outcome is recorded delivered in the same statement.
   */
  run(row: StepRow, deliverTo?: () => boolean): Promise<StepRow | null>;
  /** Gives the place back without running anything (idempotent). */
  release(): void;
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
  let reserved = 0;
  const leases = leasePlan(d);

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

  const runClaimed = async (row: StepRow, deliverTo?: () => boolean): Promise<StepRow | null> => {
    try {
      const { recorded } = await runClaimedStep(deps, row, storedTrace(row), deliverTo);
      return recorded.kind === 'dropped' ? null : recorded.row;
    } catch (err) {
      d.logger.error(
        { err, runId: row.run_id, stepIdx: row.step_idx, key: row.idempotency_key },
        'inline execution failed after the intake claimed the step; its lease will lapse into a lookup',
      );
      return null;
    }
  };

  return {
    workerId,
    execute(dispatch) {
      if (closing || running.size + reserved >= d.concurrency) return false;
      void running.track(run(dispatch));
      return true;
    },
    reserve(tool) {
      if (closing || running.size + reserved >= d.concurrency) return null;
      reserved += 1;
      let held = true;
      const release = (): void => {
        if (held) reserved -= 1;
        held = false;
      };
      return {
        claim: {
          owner: workerId,
          leaseMs: leases.leaseMsByTool.get(tool.name) ?? leases.defaultLeaseMs,
          cause: INTAKE_CLAIM_CAUSE,
        },
        run(row, deliverTo) {
          if (!held) throw new Error('inline slot used after its release');
          const work = running.track(runClaimed(row, deliverTo));
          release();
          return work;
        },
        release,
      };
    },
    get size() {
      return running.size + reserved;
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
