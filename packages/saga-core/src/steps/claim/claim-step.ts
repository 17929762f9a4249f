import { sql } from 'kysely';
import type { SagaDb, SagaTrx } from '../../db/connect.js';
import type { StepRow } from '../../db/schema.js';
import { ErrorCode } from '../../errors/error-code.js';
import { EXECUTING_RUN_STATUSES, type RunStatus } from '../../runs/run-status.js';
import { StepEventKind } from '../step-event-kind.js';
import { StepStatus } from '../step-status.js';
import { appendStepEvent } from '../append-event.js';
import { claimStepBatch, EXECUTOR_CLAIM_CAUSE, leaseUntil } from './claim-step-batch.js';
import { transitionStep } from '../transition-step.js';
import { withdrawalCause, withdrawUnclaimedStep } from './withdraw-unclaimed-steps.js';
import { leaseHolderGone } from '../../process/worker-liveness.js';

/** Parameters of {@link claimStep}. */
export interface ClaimInput {
  /** The step, by its primary key (the job carries both): the log has no index on the key. */
  readonly runId: string;
  readonly stepIdx: number;
  /** The step's idempotency key (the job carries it): a row at that index under another key is not it. */
  readonly key: string;
  /** Who holds the lease: one id per executor process (host, pid, random). */
  readonly worker: string;
  /** How long the lease lasts: the tool's timeout plus a margin, so a live executor records in time. */
  readonly leaseMs: number;
  /**
   * Lease by tool name, when the caller does not know the step's tool before the claim (the executor's
   * job names only the key); `leaseMs` is then the lease of a tool not in the map.
   */
  readonly leaseMsByTool?: ReadonlyMap<string, number>;
  /** The BullMQ job id that delivered the step; its outbox row is marked published with the claim. */
  readonly jobId: string;
  /** The schema name, for the NOTIFY of a lease-expiry transition. */
  readonly schema: string;
}

/**
 * What a claim found. Only `claimed` lets the caller execute the tool.
 * - `claimed`: this worker holds the lease; `row` is the step after the claim (attempts incremented).
 * - `lease-expired`: an earlier attempt's lease ran out with the step still INTENDED; that attempt may
 *   have reached the real system, so the step was moved to UNKNOWN instead of being executed again.
 * - `held`: another attempt holds a live lease until `leaseUntil`; nothing was done.
 * - `not-intended`: the step is in `status` (settled, UNKNOWN, awaiting approval…); nothing was done.
 * - `run-not-running`: the step was INTENDED with no lease, but its run is COMPENSATING or terminal
 *   (`runStatus`): it must not be sent, so it was withdrawn (`withdrawUnclaimedStep`: NOT_EXECUTED, or
 *   UNKNOWN when an earlier send under its key may still commit; the reason in its event); `row` is the
 *   step after that.
 * - `missing`: no step at this index with this key.
 */
export type ClaimResult =
  | { readonly kind: 'claimed'; readonly row: StepRow }
  | { readonly kind: 'lease-expired'; readonly row: StepRow }
  | { readonly kind: 'run-not-running'; readonly row: StepRow; readonly runStatus: RunStatus }
  | { readonly kind: 'held'; readonly leaseUntil: Date; readonly leaseOwner: string | null }
  | { readonly kind: 'not-intended'; readonly status: StepStatus }
  | { readonly kind: 'missing' };

/** The cause written on the INTENDED → UNKNOWN transition of a step whose lease ran out. */
export const LEASE_EXPIRED_CAUSE = 'lease expired: a previous attempt may have reached the system';

/**
 * The cause written on the withdrawal of a step whose run no longer goes forward, by the step's `attempts`
 * (`withdrawalCause`: NOT_EXECUTED when never sent, UNKNOWN after an earlier send).
 */
export function runNotRunningCause(runStatus: RunStatus, attempts = 0): string {
  return withdrawalCause(runNotRunningWhy(runStatus), attempts);
}

const runNotRunningWhy = (runStatus: RunStatus) => `withdrawn: run is ${runStatus}`;

/**
 * Claims a step for execution by compare-and-set with a lease; a claimable step in one statement (see
 * {@link claimStepBatch}), anything else in one transaction ({@link claimStepSlow}):
 *
 * ```sql
 * UPDATE saga_log SET lease_until = now() + $lease, lease_owner = $worker,
 *        attempts = attempts + 1, last_attempt_at = now()
 *  WHERE idempotency_key = $key AND status = 'INTENDED' AND lease_until IS NULL
 * RETURNING *;
 * ```
 *
 * plus the ATTEMPT event and `published_at = now()` on the job's outbox row (the API's fast path adds the
 * job to BullMQ without marking it; the claim is the proof the job arrived, so the relay need not sweep it).
 *
 * A row still INTENDED whose lease has expired (or whose holder is gone: `leaseHolderGone`) means an
 * executor died mid-call: the effect may exist, so it is never executed again here; it moves INTENDED →
 * UNKNOWN, under the row lock, only while the lease is still expired. A live lease or any other status is
 * a duplicate delivery: nothing is written.
 *
 * Only a step whose run still goes forward (`EXECUTING_RUN_STATUSES`) is claimed. An unclaimed step of a
 * COMPENSATING or terminal run (a job that outran the unwind, a re-dispatch that raced it) is withdrawn
 * instead, under the row lock (`withdrawUnclaimedStep`): NOT_EXECUTED when it was never sent, which the
 * compensator reads as "never happened, nothing to undo"; UNKNOWN when it was re-dispatched after an
 * earlier send that may still commit, which the compensator looks up by key. Nothing re-dispatches either
 * while the run is not running.
 */
export async function claimStep(db: SagaDb, c: ClaimInput): Promise<ClaimResult> {
  // The common case in one statement (one round trip, one commit): see claimStepBatch.
  const [fast] = await claimStepBatch(
    db,
    [{ runId: c.runId, stepIdx: c.stepIdx, key: c.key, jobId: c.jobId }],
    {
      worker: c.worker,
      leaseMsByTool: c.leaseMsByTool ?? NO_TOOL_LEASES,
      defaultLeaseMs: c.leaseMs,
    },
  );
  if (fast) return { kind: 'claimed', row: fast };
  return claimStepSlow(db, c);
}

/**
 * The slow path of a claim that the one-statement claim did not make: in one transaction, claims after
 * waiting for any row lock (the fast statement skips locked rows), or finds out under the row lock why the
 * step is not claimable (held, settled, missing, or a lease that expired: moved to UNKNOWN).
 */
export async function claimStepSlow(db: SagaDb, c: ClaimInput): Promise<ClaimResult> {
  return db.transaction().execute(async (trx): Promise<ClaimResult> => {
    const first = await claimLocked(trx, c);
    if (first) return first;

    // Not claimable: find out why, holding the row lock so the answer cannot change under us.
    const current = await trx
      .selectFrom('saga_log')
      .select(['run_id', 'step_idx', 'status', 'lease_until', 'lease_owner', 'attempts'])
      .select(
        sql<boolean>`lease_until IS NOT NULL AND (lease_until <= now() OR ${leaseHolderGone(c.schema)})`.as(
          'expired',
        ),
      )
      .where('run_id', '=', c.runId)
      .where('step_idx', '=', c.stepIdx)
      .where('idempotency_key', '=', c.key)
      .forUpdate()
      .executeTakeFirst();
    if (!current) return { kind: 'missing' };
    if (current.status !== StepStatus.INTENDED) return { kind: 'not-intended', status: current.status };
    if (current.lease_until === null) {
      // No lease, so the claim above missed it only for its run's status (or a run that has just come
      // back to RUNNING: the row is ours now, so a second try is exact).
      const again = await claimLocked(trx, c);
      if (again) return again;
      return withdrawForRun(trx, c, current);
    }
    if (!current.expired)
      return { kind: 'held', leaseUntil: current.lease_until, leaseOwner: current.lease_owner };

    const row = await transitionStep(trx, {
      runId: current.run_id,
      stepIdx: current.step_idx,
      to: StepStatus.UNKNOWN,
      onlyFrom: [StepStatus.INTENDED],
      cause: LEASE_EXPIRED_CAUSE,
      detail: { expiredLeaseOwner: current.lease_owner, leaseUntil: current.lease_until, worker: c.worker },
      patch: {
        lease_until: null,
        lease_owner: null,
        error: JSON.stringify({ code: ErrorCode.LEASE_EXPIRED, message: LEASE_EXPIRED_CAUSE }),
      },
      schema: c.schema,
    });
    await markJobPublished(trx, c.jobId);
    return { kind: 'lease-expired', row };
  });
}

/**
 * The claim's compare-and-set inside the slow path's transaction: INTENDED, no lease, the run still going
 * forward (checked in the same statement). Returns the `claimed` result with its ATTEMPT event and the
 * job's outbox mark, or null when nothing matched.
 */
async function claimLocked(trx: SagaTrx, c: ClaimInput): Promise<ClaimResult | null> {
  const claimed = await trx
    .updateTable('saga_log')
    .set({
      lease_until: leaseUntil(c.leaseMsByTool ?? NO_TOOL_LEASES, c.leaseMs),
      lease_owner: c.worker,
      attempts: sql<number>`attempts + 1`,
      last_attempt_at: sql<Date>`now()`,
    })
    .where('run_id', '=', c.runId)
    .where('step_idx', '=', c.stepIdx)
    .where('idempotency_key', '=', c.key)
    .where('status', '=', StepStatus.INTENDED)
    .where('lease_until', 'is', null)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('runs')
          .select('runs.run_id')
          .whereRef('runs.run_id', '=', 'saga_log.run_id')
          .where('runs.status', 'in', [...EXECUTING_RUN_STATUSES]),
      ),
    )
    .returningAll()
    .executeTakeFirst();
  if (!claimed) return null;
  await appendStepEvent(trx, {
    runId: claimed.run_id,
    stepIdx: claimed.step_idx,
    kind: StepEventKind.ATTEMPT,
    cause: EXECUTOR_CLAIM_CAUSE,
    detail: { attempt: claimed.attempts, worker: c.worker, jobId: c.jobId },
  });
  await markJobPublished(trx, c.jobId);
  return { kind: 'claimed', row: claimed };
}

/**
 * An unclaimed INTENDED step (locked by the caller) whose run no longer goes forward: withdrawn by
 * `withdrawUnclaimedStep` (NOT_EXECUTED, or UNKNOWN after an earlier send) with the run's status in the
 * event, and the job marked delivered. Nothing is sent.
 */
async function withdrawForRun(
  trx: SagaTrx,
  c: ClaimInput,
  step: { readonly run_id: string; readonly step_idx: number; readonly attempts: number },
): Promise<ClaimResult> {
  const run = await trx
    .selectFrom('runs')
    .select('status')
    .where('run_id', '=', step.run_id)
    .executeTakeFirstOrThrow();
  const row = await withdrawUnclaimedStep(trx, {
    runId: step.run_id,
    stepIdx: step.step_idx,
    attempts: step.attempts,
    why: runNotRunningWhy(run.status),
    detail: { runStatus: run.status, worker: c.worker, jobId: c.jobId },
    schema: c.schema,
  });
  await markJobPublished(trx, c.jobId);
  return { kind: 'run-not-running', row, runStatus: run.status };
}

/** `published_at = now()` on the delivered job's outbox row, if the relay has not marked it yet. */
async function markJobPublished(trx: SagaTrx, jobId: string): Promise<void> {
  await trx
    .updateTable('outbox')
    .set({ published_at: sql<Date>`now()` })
    .where('job_id', '=', jobId)
    .where('published_at', 'is', null)
    .execute();
}

const NO_TOOL_LEASES: ReadonlyMap<string, number> = new Map();
