import {
  appendStepEvent,
  InvalidTransitionError,
  lookupEvidence,
  readDeadline,
  settleFromLookup,
  stepSettlement,
  StepEventKind,
  StepStatus,
  transitionStep,
  type SagaTrx,
  type SettlingVerdict,
  type StepRow,
  type TransitionInput,
  withdrawUnclaimedStep,
  lazyChildLogger,
} from '@agent-saga/core';
import { ManualInterventionKind } from '../metrics/compensator-metrics.js';
import { unknownWaitMs, type UnwindDeps } from './unwind-deps.js';

/** What became of one unsettled step: `settled` (it moved), or `waiting` for evidence or an executor. */
export type ReconcileResult = 'settled' | 'waiting';

const CAUSE = 'compensator: reconcile before unwind';

/**
 * Settles one INTENDED or UNKNOWN step of a run being unwound, before any compensation: a step whose
 * outcome nobody knows is never compensated blindly (a refund of a charge that never happened), nor left
 * out (a charge that did).
 *
 * - INTENDED with no lease (its dispatch not claimed): the run takes no more work, so it is withdrawn under
 *   the row lock by core's one rule (`withdrawUnclaimedStep`): NOT_EXECUTED when it was never sent; UNKNOWN
 *   when it was re-dispatched after an earlier send that may still commit, looked up by key on the next
 *   pass. An executor that gets the job later finds it not INTENDED and sends nothing.
 * - INTENDED under a live lease (by the database's clock): an executor is sending it now: wait for it.
 * - UNKNOWN, or INTENDED with an expired lease: core's one lookup rule, shared with the API's inline lookup
 *   and the reconciler (`settleFromLookup`): found → CONFIRMED; not found, past the tool's lookupLagMs since
 *   the last attempt (by the database's clock) and re-checked → NOT_EXECUTED; found refused under the key
 *   once core's rule believes it → FAILED (nothing to compensate); otherwise wait, up to
 *   {@link unknownWaitMs} from the last attempt (by the database's clock: never before a "not found" past
 *   the tool's commit horizon could be believed), then MANUAL_INTERVENTION with the evidence.
 *
 * Every decision is a compare-and-set on the state the step was seen in; if the reconciler or an executor
 * moved it meanwhile, nothing is written and the next pass sees the new state.
 */
export async function reconcileStep(d: UnwindDeps, step: StepRow): Promise<ReconcileResult> {
  const log = lazyChildLogger(d.logger, {
    runId: step.run_id,
    stepIdx: step.step_idx,
    key: step.idempotency_key,
  });
  const at = { runId: step.run_id, stepIdx: step.step_idx, schema: d.schema } as const;
  const guard: Pick<TransitionInput, 'onlyFrom' | 'leaseOwner'> = {
    onlyFrom: [step.status],
    ...(step.lease_owner !== null ? { leaseOwner: step.lease_owner } : {}),
  };
  const clearLease = { lease_until: null, lease_owner: null };
  const write = async (fn: (trx: SagaTrx) => Promise<unknown>): Promise<ReconcileResult> => {
    try {
      await d.db.transaction().execute(fn);
      return 'settled';
    } catch (err) {
      if (err instanceof InvalidTransitionError) return 'settled'; // moved by someone else: re-read
      throw err;
    }
  };

  if (step.status === StepStatus.INTENDED && step.lease_until === null)
    return write(async (trx) => {
      const locked = await trx
        .selectFrom('saga_log')
        .select(['status', 'lease_until', 'attempts'])
        .where('run_id', '=', step.run_id)
        .where('step_idx', '=', step.step_idx)
        .forUpdate()
        .executeTakeFirst();
      if (locked?.status !== StepStatus.INTENDED || locked.lease_until !== null) return;
      const row = await withdrawUnclaimedStep(trx, {
        ...at,
        attempts: locked.attempts,
        why: 'compensator: withdrawn, the run is unwinding',
      });
      log.info({ status: row.status }, 'unclaimed step withdrawn: the run is unwinding');
    });
  if (
    step.status === StepStatus.INTENDED &&
    step.lease_until !== null &&
    !(await readDeadline(d.db, step.lease_until, 0)).passed
  )
    return 'waiting';

  const tool = d.registry.get(step.tool);
  const since = step.last_attempt_at ?? step.updated_at;
  const giveUp = async (reason: string, evidence: Record<string, unknown>): Promise<ReconcileResult> => {
    if (!(await readDeadline(d.db, since, unknownWaitMs(d.config, tool))).passed) return 'waiting';
    log.warn({ reason }, 'step stays unknown past its wait: manual intervention');
    return write(async (trx) => {
      await transitionStep(trx, {
        ...at,
        ...guard,
        to: StepStatus.MANUAL_INTERVENTION,
        cause: `compensator: outcome still unknown: ${reason}`,
        detail: evidence,
        patch: clearLease,
      });
      // Counted only when the compare-and-set held (a conflict throws before this line).
      d.metrics?.manualInterventions.inc({ kind: ManualInterventionKind.STEP_UNKNOWN });
    });
  };
  if (!tool) return giveUp(`tool ${step.tool} is not registered in this compensator`, {});

  const { verdict: v, observations } = await settleFromLookup({
    db: d.db,
    tool,
    target: step,
    lastAttemptAt: since,
    // Its attempts and stored error: a last attempt the vendor answered 429 needs no commit horizon.
    lastOutcome: step,
    recheckMs: d.config.LOOKUP_RECHECK_MS,
    log,
  });
  const evidence = lookupEvidence(observations.at(-1)!);
  const lookupEvent = (trx: SagaTrx, detail: Record<string, unknown>) =>
    appendStepEvent(trx, { ...at, kind: StepEventKind.LOOKUP, cause: CAUSE, detail });
  /** The step settled by what the lookup saw (its evidence an event), as `stepSettlement` maps it. */
  const settleAs = (verdict: SettlingVerdict, cause: string) =>
    write(async (trx) => {
      await lookupEvent(trx, evidence);
      await transitionStep(trx, { ...at, ...guard, ...stepSettlement(verdict, clearLease), cause });
    });
  switch (v.kind) {
    case 'absent':
      return write(async (trx) => {
        await lookupEvent(trx, { ...evidence, believed: true, rechecked: true });
        await transitionStep(trx, {
          ...at,
          ...guard,
          ...stepSettlement(v, clearLease),
          cause: 'lookup: not found (re-checked)',
        });
      });
    case 'found':
      // Several effects under one forward key: an incident whoever finds it (the reconciler counts its own).
      if (v.duplicates.length) d.metrics?.duplicateEffects.inc({ tool: step.tool });
      return settleAs(v, 'lookup: found');
    case 'refused':
      // The real system refused the call under its key: nothing to compensate.
      return settleAs(v, 'lookup: the real system refused the call under the key');
    case 'too-early':
    case 'resendable': // an unwind concludes "nothing to undo" only from proof of absence
      return giveUp('not found within the tool lookup lag', {
        ...evidence,
        believableAt: v.believableAt.toISOString(),
      });
    case 'lookup-error':
      return giveUp(`lookup failed: ${v.error.message}`, evidence);
    default: {
      const never: never = v;
      throw new Error(`unhandled verdict ${JSON.stringify(never)}`);
    }
  }
}
