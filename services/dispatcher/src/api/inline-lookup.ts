import {
  appendStepEvent,
  lockRun,
  lookupEvidence,
  readDispatch,
  redispatchStep,
  refusalDetail,
  settleFromLookup,
  stepSettlement,
  StepEventKind,
  StepStatus,
  transitionStep,
  verdictForRun,
  type AnyTool,
  type ExecuteDispatch,
  type Logger,
  type SagaDb,
  type LookupSettlement,
  type RedispatchBudget,
  type SagaTrx,
  type StepRow,
} from '@agent-saga/core';

export interface LookupRequest {
  readonly db: SagaDb;
  readonly schema: string;
  readonly tenantId: string;
  readonly tool: AnyTool;
  /** The step as the intake saw it: UNKNOWN, or INTENDED with an expired lease. */
  readonly step: StepRow;
  /** Pause before a "not found" is checked once more (search indexes lag). */
  readonly recheckMs: number;
  /** Once spent (core's `redispatchBudgetSpent`), a step proven absent goes to a person, not sent again. */
  readonly redispatchBudget: RedispatchBudget;
  readonly log: Logger;
}

export interface LookupOutcome {
  readonly step: StepRow;
  /** False only when this call re-dispatched the step: its outcome will come from that execution. */
  readonly replayed: boolean;
  readonly dispatch: ExecuteDispatch | null;
}

/**
 * The inline form of the reconciler, for a retry of an UNKNOWN or lease-expired INTENDED step: ask the
 * tool's `lookup` for the step's key.
 * - Found: the step is CONFIRMED with what the real system holds; nothing is executed again.
 * - Not found: believed only when the step's last attempt was sent more than the tool's commit horizon
 *   plus its `lookupLagMs` ago (by the database's clock) and a second lookup after `recheckMs` agrees
 *   (core's one rule, `settleFromLookup`); the call found refused under the key (believed by core's rule): FAILED;
 *   then the step is NOT_EXECUTED and re-dispatched with the same key and its stored
 *   arguments. Otherwise (too early, or the lookup failed) it stays, or becomes, UNKNOWN and the caller is
 *   told so.
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
  const settled = await settleFromLookup({
    db: req.db,
    tool: req.tool,
    target: req.step,
    lastAttemptAt: req.step.last_attempt_at ?? req.step.updated_at,
    // Its attempts and stored error: a last attempt the vendor answered 429 needs no commit horizon.
    lastOutcome: req.step,
    recheckMs: req.recheckMs,
    log,
  });
  return settle(req, log, settled);
}

/** Why a verdict leaves the step unknown, for its LOOKUP event and the log. */
function unseenReason(
  req: LookupRequest,
  v: Extract<LookupSettlement['verdict'], { kind: 'too-early' | 'lookup-error' }>,
): string {
  return v.kind === 'too-early'
    ? `not found before ${v.believableAt.toISOString()} (the commit horizon and lookupLagMs after the last attempt)`
    : `lookup failed: ${v.error.message}`;
}

async function settle(req: LookupRequest, log: Logger, settled: LookupSettlement): Promise<LookupOutcome> {
  return req.db.transaction().execute(async (trx) => {
    const seenAs = req.step;
    const run = await lockRun(trx, req.tenantId, seenAs.run_id);
    const v = verdictForRun(settled.verdict, run);
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
    const lookups = settled.observations.map(lookupEvidence);
    switch (v.kind) {
      case 'found': {
        await lookupEvent(trx, at, {
          found: true,
          externalRef: v.effect.externalRef,
          duplicates: v.duplicates.length ? v.duplicates : null,
          lookups,
        });
        if (v.duplicates.length) log.error({ duplicates: v.duplicates }, 'duplicate effects under one key');
        const row = await transitionStep(trx, {
          ...at,
          ...guard,
          ...stepSettlement(v, clearLease),
          cause: 'lookup: found',
        });
        log.info({ externalRef: v.effect.externalRef }, 'inline lookup found the effect; step confirmed');
        return { step: row, replayed: true, dispatch: null };
      }
      case 'absent':
      case 'resendable': {
        await lookupEvent(trx, at, {
          found: false,
          ...(v.kind === 'absent'
            ? { believed: true, rechecked: true }
            : { believed: false, resendable: true, believableAt: v.believableAt.toISOString() }),
          lookups,
        });
        await transitionStep(trx, {
          ...at,
          ...guard,
          ...stepSettlement(v, clearLease),
          cause:
            v.kind === 'absent'
              ? 'lookup: not found (re-checked)'
              : 'lookup: no effect found past the lookup lag; the vendor dedupes by key: sent again under it',
        });
        const redispatch = await redispatchStep(trx, {
          ...at,
          cause:
            v.kind === 'absent'
              ? 'retry call: re-dispatch after the lookup proved absence'
              : 'retry call: re-dispatch under the same key (the vendor dedupes by key)',
          by: { kind: 'harness', ...req.redispatchBudget },
        });
        if (redispatch.kind === 'budget-spent') {
          log.warn(
            { redispatches: redispatch.redispatches },
            'inline lookup proved absence again; re-dispatch budget spent: the step needs a person',
          );
          return { step: redispatch.row, replayed: true, dispatch: null };
        }
        if (redispatch.kind === 'awaiting-renewal') {
          // The run's authority lapsed: nothing is sent until a person renews it (issue 12).
          log.info(
            { approvalId: redispatch.approval.id },
            'authority lapsed; re-dispatch waits for a renewal',
          );
          return { step: redispatch.row, replayed: true, dispatch: null };
        }
        log.info({ dispatchNo: redispatch.dispatchNo }, 'inline lookup proved absence; step re-dispatched');
        return {
          step: redispatch.row,
          replayed: false,
          dispatch: await readDispatch(trx, seenAs.idempotency_key),
        };
      }
      case 'refused': {
        const refused = refusalDetail(v.error);
        await lookupEvent(trx, at, { found: false, refused, lookups });
        const row = await transitionStep(trx, {
          ...at,
          ...guard,
          ...stepSettlement(v, clearLease),
          cause: 'lookup: the real system refused the call under the key',
        });
        log.info({ refused }, 'inline lookup found the call refused under its key; step failed');
        return { step: row, replayed: true, dispatch: null };
      }
      case 'too-early':
      case 'lookup-error': {
        const reason = unseenReason(req, v);
        await lookupEvent(trx, at, {
          found: false,
          believed: false,
          reason,
          lookups,
          ...(v.kind === 'too-early' ? { believableAt: v.believableAt.toISOString() } : {}),
        });
        let row: StepRow = now;
        if (seenAs.status === StepStatus.INTENDED)
          // The lease ran out with no outcome recorded: whoever held it is gone; the outcome is unknown.
          row = await transitionStep(trx, {
            ...at,
            ...guard,
            to: StepStatus.UNKNOWN,
            cause: 'lease expired; lookup could not settle it',
            patch: clearLease,
          });
        log.info({ reason }, 'inline lookup could not settle the step; it stays unknown');
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
