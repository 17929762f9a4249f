import { setTimeout as sleep } from 'node:timers/promises';
import {
  appendStepEvent,
  lockRun,
  lookupByKey,
  lookupLagPassed,
  redispatchStep,
  StepEventKind,
  StepStatus,
  transitionStep,
  type AnyTool,
  type Logger,
  type SagaDb,
  type SagaTrx,
  type StepRow,
  type ToolEffect,
} from '@agent-saga/core';
import { readDispatch, type Dispatch } from './dispatch.js';

export interface LookupRequest {
  readonly db: SagaDb;
  readonly schema: string;
  readonly tenantId: string;
  readonly tool: AnyTool;
  /** The step as the intake saw it: UNKNOWN, or INTENDED with an expired lease. */
  readonly step: StepRow;
  /** Pause before a "not found" is checked once more (search indexes lag). */
  readonly recheckMs: number;
  readonly log: Logger;
}

export interface LookupOutcome {
  readonly step: StepRow;
  /** False only when this call re-dispatched the step: its outcome will come from that execution. */
  readonly replayed: boolean;
  readonly dispatch: Dispatch | null;
}

/**
 * The inline form of the reconciler, for a retry of an UNKNOWN or lease-expired INTENDED step: ask the
 * tool's `lookup` for the step's key.
 * - Found: the step is CONFIRMED with what the real system holds; nothing is executed again.
 * - Not found: believed only when the step's last attempt was sent more than the tool's `lookupLagMs` ago
 *   and a second lookup after `recheckMs` agrees; then the step is NOT_EXECUTED and re-dispatched with the
 *   same key and its stored arguments. Otherwise (too early, or the lookup failed) it stays, or becomes,
 *   UNKNOWN and the caller is told so.
 *
 * Lookups run outside any transaction (they call the real system). The decision is written afterwards under
 * the run's lock, by compare-and-set on the state the step was seen in: if an executor or another retry moved
 * it meanwhile, nothing is written and the caller gets the step as it now is.
 */
export async function resolveByLookup(req: LookupRequest): Promise<LookupOutcome> {
  const log = req.log.child({
    runId: req.step.run_id,
    stepIdx: req.step.step_idx,
    key: req.step.idempotency_key,
  });
  const at = { runId: req.step.run_id, stepIdx: req.step.step_idx };
  let seen = await lookupByKey(req.tool, req.step, log);
  if (seen.kind === 'absent') {
    if (!(await lookupLagPassed(req.db, at, req.tool.lookupLagMs)).passed)
      return settle(req, log, {
        kind: 'unseen',
        reason: `not found within lookupLagMs (${req.tool.lookupLagMs} ms) of the last attempt`,
      });
    await sleep(req.recheckMs);
    seen = await lookupByKey(req.tool, req.step, log);
    if (seen.kind === 'absent') return settle(req, log, { kind: 'absent' });
  }
  if (seen.kind === 'found') return settle(req, log, { kind: 'found', effect: seen.effect });
  return settle(req, log, { kind: 'unseen', reason: `lookup failed: ${seen.error.message}` });
}

type Verdict =
  | { readonly kind: 'found'; readonly effect: ToolEffect }
  | { readonly kind: 'absent' }
  | { readonly kind: 'unseen'; readonly reason: string };

async function settle(req: LookupRequest, log: Logger, v: Verdict): Promise<LookupOutcome> {
  return req.db.transaction().execute(async (trx) => {
    const seenAs = req.step;
    await lockRun(trx, req.tenantId, seenAs.run_id);
    const now = await trx
      .selectFrom('saga_log')
      .selectAll()
      .where('run_id', '=', seenAs.run_id)
      .where('step_idx', '=', seenAs.step_idx)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const unchanged =
      now.status === seenAs.status &&
      now.attempts === seenAs.attempts &&
      now.lease_owner === seenAs.lease_owner;
    if (!unchanged) {
      log.info({ status: now.status }, 'step moved while it was looked up; answering with its state');
      return { step: now, replayed: true, dispatch: null };
    }
    const at = { runId: seenAs.run_id, stepIdx: seenAs.step_idx, schema: req.schema } as const;
    const guard = {
      onlyFrom: [seenAs.status],
      ...(seenAs.lease_owner !== null ? { leaseOwner: seenAs.lease_owner } : {}),
    };
    const clearLease = { lease_until: null, lease_owner: null };
    switch (v.kind) {
      case 'found': {
        await lookupEvent(trx, at, {
          found: true,
          externalRef: v.effect.externalRef,
          duplicates: v.effect.duplicates ?? null,
        });
        if (v.effect.duplicates?.length)
          log.error({ duplicates: v.effect.duplicates }, 'duplicate effects under one key');
        const row = await transitionStep(trx, {
          ...at,
          ...guard,
          to: StepStatus.CONFIRMED,
          cause: 'lookup: found',
          patch: {
            ...clearLease,
            external_ref: v.effect.externalRef,
            result: JSON.stringify(v.effect.result ?? null),
          },
        });
        log.info({ externalRef: v.effect.externalRef }, 'inline lookup found the effect; step confirmed');
        return { step: row, replayed: true, dispatch: null };
      }
      case 'absent': {
        await lookupEvent(trx, at, { found: false, believed: true, rechecked: true });
        await transitionStep(trx, {
          ...at,
          ...guard,
          to: StepStatus.NOT_EXECUTED,
          cause: 'lookup: not found (re-checked)',
          patch: clearLease,
        });
        const redispatch = await redispatchStep(trx, {
          ...at,
          cause: 'retry call: re-dispatch after the lookup proved absence',
        });
        log.info({ dispatchNo: redispatch.dispatchNo }, 'inline lookup proved absence; step re-dispatched');
        return {
          step: redispatch.row,
          replayed: false,
          dispatch: await readDispatch(trx, seenAs.idempotency_key),
        };
      }
      case 'unseen': {
        await lookupEvent(trx, at, { found: false, believed: false, reason: v.reason });
        let row = now;
        if (seenAs.status === StepStatus.INTENDED)
          // The lease ran out with no outcome recorded: whoever held it is gone; the outcome is unknown.
          row = await transitionStep(trx, {
            ...at,
            ...guard,
            to: StepStatus.UNKNOWN,
            cause: 'lease expired; lookup could not settle it',
            patch: clearLease,
          });
        log.info({ reason: v.reason }, 'inline lookup could not settle the step; it stays unknown');
        return { step: row, replayed: true, dispatch: null };
      }
      default: {
        const never: never = v;
        throw new Error(`unhandled verdict ${JSON.stringify(never)}`);
      }
    }
  });
}

async function lookupEvent(
  trx: SagaTrx,
  at: { runId: string; stepIdx: number },
  detail: Record<string, unknown>,
): Promise<void> {
  await appendStepEvent(trx, {
    runId: at.runId,
    stepIdx: at.stepIdx,
    kind: StepEventKind.LOOKUP,
    cause: 'inline lookup on retry',
    detail,
  });
}
