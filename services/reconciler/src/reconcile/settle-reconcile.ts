import { sql } from 'kysely';
import {
  appendStepEvent,
  dbNowPlus,
  equalJitterBackoffMs,
  lockRun,
  lookupEvidence,
  nextLookupAt,
  openCase,
  redispatchStep,
  refusalDetail,
  RunStatus,
  StepEventKind,
  StepStatus,
  stepSettlement,
  transitionStep,
  verdictForRun,
  type LookupObservation,
  type LookupVerdict,
  type RedispatchBudget,
  type SagaDb,
  type SagaTrx,
  type StepRow,
} from '@agent-saga/core';
import { listLookupEvidence } from '../sql/list-lookup-evidence.js';
import { rescheduleReconcile } from '../sql/reschedule-reconcile.js';
import { ReconcileOutcome } from '../metrics/reconciler-metrics.js';

/** Limits of the retry policy for failed lookups. */
export interface RetryPolicy {
  readonly maxLookupErrors: number;
  readonly maxUnknownAgeMs: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /**
   * Re-dispatches of a step proven NOT_EXECUTED before it goes to a person (`SAGA_MAX_REDISPATCHES`, once the
   * first is `SAGA_REDISPATCH_MIN_SPAN_MS` old: core's `redispatchBudgetSpent`).
   */
  readonly redispatchBudget: RedispatchBudget;
}

export interface SettleInput {
  readonly db: SagaDb;
  readonly schema: string;
  /** The reconciler that claimed the step. */
  readonly owner: string;
  /** The step as claimed: every decision is a compare-and-set on this state. */
  readonly seen: StepRow;
  readonly observations: readonly LookupObservation[];
  readonly verdict: LookupVerdict;
  readonly policy: RetryPolicy;
  /** Tool's lookup lag, for the evidence and the next look of a "not found" too early to believe. */
  readonly lookupLagMs: number;
  /** The shortest pause between two looks at one step (LOOKUP_RECHECK_MS). */
  readonly recheckMs: number;
}

/** What the settle wrote. `status` is the step's status after it. */
export interface SettleResult {
  readonly outcome: ReconcileOutcome;
  readonly status: StepStatus;
  /** The run was still going forward and the NOT_EXECUTED step was sent again (dispatch number). */
  readonly redispatchNo?: number;
  /** The references of every effect found under the key, when there were several (an incident). */
  readonly duplicates?: readonly string[];
  /** A failed lookup's count and when the step will be looked at again. */
  readonly lookupErrors?: number;
  readonly retryInMs?: number;
  readonly reason?: string;
}

/** Cause of the reconciler's LOOKUP events. */
export const RECONCILER_LOOKUP_CAUSE = 'reconciler: lookup by key';
/** Cause of the LOOKUP event that records a duplicate-effect incident. */
export const DUPLICATE_EFFECT_CAUSE = 'duplicate-effect incident: several effects under one key';

/**
 * Writes the verdict of one reconcile pass in one transaction. Lookups ran outside it; here, under the run's
 * lock and then the step's (the order the API's inline lookup takes, so neither deadlocks the other), the
 * step is read again and the verdict is applied only if it is still as claimed: same status, same attempt,
 * same executor lease, and this reconciler's lease. Otherwise (an executor recorded a late outcome, the API's
 * inline lookup settled it, a re-dispatch ran) the observations are kept as events and nothing else moves.
 *
 * - found → CONFIRMED with the external ref and result (several effects: an incident event too);
 * - absent → NOT_EXECUTED, then, for a RUNNING run, re-dispatched with the same key and stored arguments
 *   (unless the run's authority lapsed: then it stays NOT_EXECUTED and waits for a renewal, see
 *   `redispatchStep`);
 * - resendable (no effect found past the lag: a "not found", or a refusal whose send nobody saw answered;
 *   on a tool whose vendor dedupes by key) → as absent, for a run `mayResendUnproven` allows (going
 *   forward, no lapsing authority): sent again under the same key; for any other run, too-early;
 * - refused → FAILED with the vendor's refusal (its record of the call under the key shows it ended without
 *   the effect, for good: a re-send would only be told the same), nothing sent again;
 * - too-early → stays (or, from a lapsed INTENDED, becomes) UNKNOWN, looked at again soon enough to find an
 *   effect the search did not show yet, and last when a "not found" can be believed (core's `nextLookupAt`);
 * - lookup-error → UNKNOWN with backoff and jitter; past the budget or the age limit, MANUAL_INTERVENTION
 *   carrying every lookup of the step as evidence.
 *
 * Every lookup of the pass becomes a LOOKUP event (when, how long, what it saw, by whom).
 */
export async function settleReconcile(s: SettleInput): Promise<SettleResult> {
  return s.db.transaction().execute(async (trx) => {
    const { seen } = s;
    const run = await lockRun(trx, seen.tenant_id, seen.run_id);
    const now = await trx
      .selectFrom('saga_log')
      .selectAll()
      .select(
        sql<number>`extract(epoch FROM now() - coalesce(last_attempt_at, created_at)) * 1000`.as('age_ms'),
      )
      .where('run_id', '=', seen.run_id)
      .where('step_idx', '=', seen.step_idx)
      .forUpdate()
      .executeTakeFirstOrThrow();
    for (const o of s.observations)
      await appendStepEvent(trx, {
        runId: seen.run_id,
        stepIdx: seen.step_idx,
        kind: StepEventKind.LOOKUP,
        cause: RECONCILER_LOOKUP_CAUSE,
        detail: { ...lookupEvidence(o), reconciler: s.owner, stepStatus: seen.status },
      });

    const unchanged =
      now.status === seen.status &&
      now.attempts === seen.attempts &&
      now.lease_owner === seen.lease_owner &&
      now.reconcile_lease_owner === s.owner;
    if (!unchanged) {
      await rescheduleReconcile(trx, { runId: seen.run_id, stepIdx: seen.step_idx, owner: s.owner });
      return { outcome: ReconcileOutcome.SUPERSEDED, status: now.status };
    }

    const at = { runId: seen.run_id, stepIdx: seen.step_idx, schema: s.schema } as const;
    const guard = {
      onlyFrom: [seen.status],
      ...(seen.lease_owner !== null ? { leaseOwner: seen.lease_owner } : {}),
    };
    /** Clears the executor's lapsed lease and this reconciler's lease. */
    const released = {
      lease_until: null,
      lease_owner: null,
      reconcile_lease_until: null,
      reconcile_lease_owner: null,
    };
    const lookups = s.observations.map(lookupEvidence);
    const v = verdictForRun(s.verdict, run);
    switch (v.kind) {
      case 'found': {
        const duplicates = v.duplicates.length ? v.duplicates : undefined;
        if (duplicates)
          await appendStepEvent(trx, {
            ...at,
            kind: StepEventKind.LOOKUP,
            cause: DUPLICATE_EFFECT_CAUSE,
            detail: {
              incident: 'duplicate_effect',
              key: seen.idempotency_key,
              kept: v.effect.externalRef,
              duplicates,
              reconciler: s.owner,
            },
          });
        await transitionStep(trx, {
          ...at,
          ...guard,
          ...stepSettlement(v, { ...released, next_reconcile_at: null }),
          cause: 'reconciler: lookup found the effect',
          detail: { externalRef: v.effect.externalRef, lookups, ...(duplicates ? { duplicates } : {}) },
        });
        return {
          outcome: ReconcileOutcome.CONFIRMED,
          status: StepStatus.CONFIRMED,
          ...(duplicates ? { duplicates } : {}),
        };
      }
      case 'absent':
      case 'resendable': {
        await transitionStep(trx, {
          ...at,
          ...guard,
          // A step sent again starts its reconcile history afresh.
          ...stepSettlement(v, { ...released, reconcile_attempts: 0, next_reconcile_at: null }),
          cause:
            v.kind === 'absent'
              ? 'reconciler: not found, re-checked after the lookup lag'
              : 'reconciler: no effect found past the lookup lag; the vendor dedupes by key: sent again under it',
          detail: { lookups, lookupLagMs: s.lookupLagMs, lastAttemptAt: seen.last_attempt_at },
        });
        if (run.status !== RunStatus.RUNNING)
          return {
            outcome: ReconcileOutcome.NOT_EXECUTED,
            status: StepStatus.NOT_EXECUTED,
            reason: `run is ${run.status}: not sent again`,
          };
        const r = await redispatchStep(trx, {
          ...at,
          cause:
            v.kind === 'absent'
              ? 'reconciler: re-dispatch after the lookup proved absence'
              : 'reconciler: re-dispatch under the same key (the vendor dedupes by key)',
          detail: { reconciler: s.owner },
          by: {
            kind: 'harness',
            ...s.policy.redispatchBudget,
          },
        });
        if (r.kind === 'budget-spent')
          return {
            outcome: ReconcileOutcome.MANUAL_INTERVENTION,
            status: StepStatus.MANUAL_INTERVENTION,
            reason: `re-dispatch budget spent: sent again ${r.redispatches} times, never reached the system`,
          };
        if (r.kind === 'awaiting-renewal')
          return {
            outcome: ReconcileOutcome.NOT_EXECUTED,
            status: StepStatus.NOT_EXECUTED,
            reason: `the run's authority lapsed: not sent again before renewal ${r.approval.id} is approved`,
          };
        return {
          outcome: ReconcileOutcome.NOT_EXECUTED,
          status: StepStatus.INTENDED,
          redispatchNo: r.dispatchNo,
        };
      }
      case 'refused': {
        const refused = refusalDetail(v.error);
        await transitionStep(trx, {
          ...at,
          ...guard,
          ...stepSettlement(v, { ...released, next_reconcile_at: null }),
          cause: 'reconciler: the real system refused the call under the key',
          detail: { refused, lookups },
        });
        return { outcome: ReconcileOutcome.FAILED, status: StepStatus.FAILED, reason: v.error.message };
      }
      case 'too-early': {
        const look = nextLookupAt({
          lastAttemptAt: now.last_attempt_at ?? now.created_at,
          believableAt: v.believableAt,
          lookupLagMs: s.lookupLagMs,
          floorMs: s.recheckMs,
        });
        const next = (await sql<{ at: Date }>`SELECT ${look} AS at`.execute(trx)).rows[0]!.at;
        if (seen.status === StepStatus.INTENDED) {
          await transitionStep(trx, {
            ...at,
            ...guard,
            to: StepStatus.UNKNOWN,
            cause: 'reconciler: lease expired; not found yet, within the lookup lag',
            detail: { lookups, lookupLagMs: s.lookupLagMs, believableAt: v.believableAt.toISOString() },
            patch: { ...released, next_reconcile_at: next },
          });
        } else await rescheduleReconcile(trx, { ...at, owner: s.owner, at: next });
        return { outcome: ReconcileOutcome.AWAITING_LAG, status: StepStatus.UNKNOWN };
      }
      case 'lookup-error':
        return settleLookupError(trx, s, now.age_ms, v.error, { at, guard, released, lookups });
      default: {
        const never: never = v;
        throw new Error(`unhandled verdict ${JSON.stringify(never)}`);
      }
    }
  });
}

/** A failed lookup: backoff, or past the budget or the age limit, MANUAL_INTERVENTION with the evidence. */
async function settleLookupError(
  trx: SagaTrx,
  s: SettleInput,
  ageMs: number,
  error: { readonly name: string; readonly message: string },
  c: {
    readonly at: { readonly runId: string; readonly stepIdx: number; readonly schema: string };
    readonly guard: { readonly onlyFrom: readonly StepStatus[]; readonly leaseOwner?: string };
    readonly released: Record<string, null>;
    readonly lookups: readonly Record<string, unknown>[];
  },
): Promise<SettleResult> {
  const { seen, policy } = s;
  const lookupErrors = seen.reconcile_attempts + 1;
  const overBudget = lookupErrors >= policy.maxLookupErrors;
  const tooOld = ageMs >= policy.maxUnknownAgeMs;
  if (overBudget || tooOld) {
    const reason = overBudget
      ? `lookup failed ${lookupErrors} times (budget ${policy.maxLookupErrors})`
      : `still unresolved ${Math.round(ageMs / 1000)} s after the last attempt (limit ${policy.maxUnknownAgeMs / 1000} s)`;
    const evidence = (await listLookupEvidence(trx, c.at)).map((e) => ({ ...e.detail, cause: e.cause }));
    await transitionStep(trx, {
      ...c.at,
      ...c.guard,
      to: StepStatus.MANUAL_INTERVENTION,
      cause: `reconciler: gave up: ${reason}`,
      detail: { reason, lastError: error, lookupErrors, ageMs: Math.round(ageMs), evidence },
      patch: { ...c.released, reconcile_attempts: lookupErrors, next_reconcile_at: null },
    });
    // The operator queue: one open case per step, carrying every lookup the reconciler made.
    await openCase(trx, {
      runId: c.at.runId,
      stepIdx: c.at.stepIdx,
      tenantId: seen.tenant_id,
      reason: `step ${c.at.stepIdx} (${seen.tool}): outcome unknown; the reconciler gave up: ${reason}`,
      evidence: {
        lastError: error,
        lookupErrors,
        ageMs: Math.round(ageMs),
        lookups: evidence,
        key: seen.idempotency_key,
      },
    });
    return {
      outcome: ReconcileOutcome.MANUAL_INTERVENTION,
      status: StepStatus.MANUAL_INTERVENTION,
      lookupErrors,
      reason,
    };
  }
  const retryInMs = equalJitterBackoffMs(lookupErrors, policy.backoffBaseMs, policy.backoffMaxMs);
  if (seen.status === StepStatus.INTENDED) {
    // By the database's clock, as every other time in the log (a patch takes values, not expressions).
    const next = await sql<{ at: Date }>`SELECT ${dbNowPlus(retryInMs)} AS at`.execute(trx);
    await transitionStep(trx, {
      ...c.at,
      ...c.guard,
      to: StepStatus.UNKNOWN,
      cause: 'reconciler: lease expired; lookup failed',
      detail: { lookups: c.lookups, lookupErrors, retryInMs },
      patch: {
        ...c.released,
        reconcile_attempts: lookupErrors,
        next_reconcile_at: next.rows[0]!.at,
      },
    });
  } else await rescheduleReconcile(trx, { ...c.at, owner: s.owner, inMs: retryInMs, lookupErrors });
  return { outcome: ReconcileOutcome.LOOKUP_ERROR, status: StepStatus.UNKNOWN, lookupErrors, retryInMs };
}
