import { sql } from 'kysely';
import type { SagaTrx } from '../../db/connect.js';
import type { ApprovalRow, StepRow } from '../../db/schema.js';
import {
  authorityLapsed,
  recoveryPolicyOf,
  RECOVERY_APPROVAL_TTL_MS,
} from '../../review/approvals/recovery-policy.js';
import { requestRenewal } from '../../review/approvals/request-renewal.js';
import { RunNotRunningError } from '../../errors/errors.js';
import { EXECUTING_RUN_STATUSES, type RunStatus } from '../../runs/run-status.js';
import { StepStatus } from '../step-status.js';
import {
  countRedispatches,
  giveUpRedispatching,
  redispatchBudgetSpent,
  type RedispatchBudget,
} from './redispatch-budget.js';
import { enqueueNextDispatch } from '../../outbox/enqueue-next-dispatch.js';
import { transitionStep } from '../transition-step.js';

/**
 * Who sends a NOT_EXECUTED step again.
 * - `harness`: the reconciler or the API after a lookup proved absence, within the re-dispatch budget
 *   (`SAGA_MAX_REDISPATCHES`, `SAGA_REDISPATCH_MIN_SPAN_MS`: `redispatchBudgetSpent`);
 * - `person`: an operator who resolved the step's case `not_executed`. A person's re-dispatch is never
 *   capped, and the harness's count starts again after it (the person saw the evidence and chose to send).
 */
export type RedispatchSender =
  ({ readonly kind: 'harness' } & RedispatchBudget) | { readonly kind: 'person'; readonly actor: string };

export interface RedispatchInput {
  readonly runId: string;
  readonly stepIdx: number;
  /** Why the step is sent again: `inline lookup: not found`, `reconciler: proved absent`, … */
  readonly cause: string;
  readonly detail?: Record<string, unknown>;
  readonly schema: string;
  readonly by: RedispatchSender;
  /** Whether to NOTIFY the outbox relays (default true; false when the caller publishes the job itself). */
  readonly notifyRelay?: boolean;
  /** The caller publishes the job itself: the relays leave it alone this long (see `recordIntent`). */
  readonly relayGraceMs?: number;
  /** How long a renewal asked for here waits for a person (default `RECOVERY_APPROVAL_TTL_MS`). */
  readonly renewalTtlMs?: number;
}

/**
 * What {@link redispatchStep} did.
 * - `redispatched`: the step is INTENDED again with a new outbox message (`dispatchNo`, `jobId`);
 * - `budget-spent`: the harness had already sent it `redispatches` times, each proven never to have
 *   reached the system: it is MANUAL_INTERVENTION with an open case carrying every dispatch and why it came
 *   back, and nothing was enqueued;
 * - `awaiting-renewal`: the run's authority has lapsed (`policy.authorityTtlMs`): the step stays
 *   NOT_EXECUTED, nothing was enqueued, and `approval` (the run's pending renewal, created if there was
 *   none) shows the re-dispatch as its recovery plan. Approved, the step is sent again (`decideApproval`);
 *   rejected, the run stops for a person.
 */
export type Redispatch =
  | {
      readonly kind: 'redispatched';
      readonly row: StepRow;
      /** 2 for the first re-dispatch (the intake's dispatch is 1). */
      readonly dispatchNo: number;
      /** The BullMQ job id of the new outbox message (distinct from every earlier dispatch of the step). */
      readonly jobId: string;
    }
  | { readonly kind: 'budget-spent'; readonly row: StepRow; readonly redispatches: number }
  | { readonly kind: 'awaiting-renewal'; readonly row: StepRow; readonly approval: ApprovalRow };

/**
 * Sends a NOT_EXECUTED step again: NOT_EXECUTED → INTENDED by compare-and-set with the lease cleared, plus a
 * new outbox message with the next dispatch number, in the caller's transaction. The step keeps its key and
 * its stored arguments: a re-dispatch never sends anything a model wrote after the intent.
 *
 * The re-dispatch budget lives here, once, for every caller (reconciler, the API's inline lookup and retry
 * intake): a step the harness has already re-dispatched `maxRedispatches` times (since a person last acted
 * on it), each time proven NOT_EXECUTED again, the first of them at least `minSpanMs` ago (or three times
 * the budget, however fast: `redispatchBudgetSpent`), is a poison call, not bad luck; it goes to
 * MANUAL_INTERVENTION with a case instead of looping forever. A run with an approved pivot stops
 * (MANUAL_INTERVENTION) at its next follow-up, as for any commit step that needs a person; any other run
 * stays as it is and its agent reads the step's MANUAL_INTERVENTION. The republish of an intent that Redis
 * lost (`republishUnclaimedIntents`) is not a re-dispatch and does not count (see there).
 *
 * The run's authority is checked here too, once for every harness caller: with `policy.authorityTtlMs`,
 * a harness re-dispatch after `authority_at + ttl` (the database's clock) sends nothing and waits for a
 * renewal (`awaiting-renewal`). A person's re-dispatch is itself a grant of authority, never held.
 *
 * Parameters: `runId`, `stepIdx` name the step; `schema` names the NOTIFY channels; `by` who sends it.
 * @throws InvalidTransitionError when the step is not NOT_EXECUTED (someone else re-dispatched it first).
 * @throws RunNotRunningError when the run no longer goes forward (COMPENSATING or terminal: see
 *   `EXECUTING_RUN_STATUSES`): a step of an unwound run is never sent again, whoever asks.
 */
export async function redispatchStep(trx: SagaTrx, r: RedispatchInput): Promise<Redispatch> {
  // Read without a lock (the callers that must be exact hold the run's lock already; taking it here, after
  // a caller locked the step, would invert the run-then-step order). A re-dispatch that races an unwind is
  // caught twice more: the unwind withdraws unclaimed intents, and the claim checks the run's status.
  const run = await trx
    .selectFrom('runs')
    .select(['status', 'tenant_id', 'policy', 'authority_at', sql<Date>`now()`.as('db_now')])
    .where('run_id', '=', r.runId)
    .executeTakeFirst();
  if (run && !(EXECUTING_RUN_STATUSES as readonly RunStatus[]).includes(run.status))
    throw new RunNotRunningError(r.runId, run.status, 'sends no step again');
  if (r.by.kind === 'harness' && run) {
    const policy = recoveryPolicyOf(run.policy);
    if (authorityLapsed(policy, run.authority_at, run.db_now))
      return awaitRenewal(trx, r, {
        tenantId: run.tenant_id,
        authorityAt: run.authority_at,
        ttlMs: policy.authorityTtlMs!,
        dbNow: run.db_now,
      });
  }
  if (r.by.kind === 'harness') {
    // Counted under the step's row lock, taken by the caller's NOT_EXECUTED transition.
    const made = await countRedispatches(trx, r.runId, r.stepIdx);
    if (redispatchBudgetSpent(made, r.by)) {
      const redispatches = made.count;
      const row = await giveUpRedispatching(trx, {
        runId: r.runId,
        stepIdx: r.stepIdx,
        redispatches,
        maxRedispatches: r.by.maxRedispatches,
        cause: r.cause,
        schema: r.schema,
      });
      return { kind: 'budget-spent', row, redispatches };
    }
  }
  const row = await transitionStep(trx, {
    runId: r.runId,
    stepIdx: r.stepIdx,
    to: StepStatus.INTENDED,
    onlyFrom: [StepStatus.NOT_EXECUTED],
    cause: r.cause,
    ...(r.detail ? { detail: r.detail } : {}),
    patch: { lease_until: null, lease_owner: null },
    schema: r.schema,
    ...(r.by.kind === 'person' ? { actor: r.by.actor } : {}),
  });
  const next = await enqueueNextDispatch(trx, row, {
    schema: r.schema,
    notifyRelay: r.notifyRelay ?? true,
    relayGraceMs: r.relayGraceMs ?? 0,
  });
  return { kind: 'redispatched', row, ...next };
}

/** The re-dispatch of a run whose authority lapsed: the run's renewal, the step left NOT_EXECUTED. */
async function awaitRenewal(
  trx: SagaTrx,
  r: RedispatchInput,
  a: { readonly tenantId: string; readonly authorityAt: Date; readonly ttlMs: number; readonly dbNow: Date },
): Promise<Redispatch> {
  const row = await trx
    .selectFrom('saga_log')
    .selectAll()
    .where('run_id', '=', r.runId)
    .where('step_idx', '=', r.stepIdx)
    .executeTakeFirstOrThrow();
  const { approval } = await requestRenewal(trx, {
    tenantId: a.tenantId,
    runId: r.runId,
    plan: [
      {
        action: 'redispatch',
        stepIdx: row.step_idx,
        tool: row.tool,
        key: row.idempotency_key,
        args: row.args,
      },
    ],
    recovery: `re-dispatch of step ${row.step_idx} (${row.tool}): ${r.cause}`,
    authorityAt: a.authorityAt,
    authorityTtlMs: a.ttlMs,
    expiresAt: new Date(a.dbNow.getTime() + (r.renewalTtlMs ?? RECOVERY_APPROVAL_TTL_MS)),
  });
  return { kind: 'awaiting-renewal', row, approval };
}
