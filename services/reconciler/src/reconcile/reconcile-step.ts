import {
  settleFromLookup,
  ToolNotRegisteredError,
  type AnyTool,
  type LookupObservation,
  type LookupSettlement,
  type Logger,
  type SagaDb,
  type StepRow,
  type ToolRegistry,
  lazyChildLogger,
} from '@agent-saga/core';
import { ReconcileOutcome, type ReconcilerMetrics } from '../metrics/reconciler-metrics.js';
import { settleReconcile, type RetryPolicy, type SettleResult } from './settle-reconcile.js';

export interface ReconcileStepDeps {
  readonly db: SagaDb;
  readonly schema: string;
  readonly registry: ToolRegistry;
  /** This reconciler's id, the owner of its reconcile leases. */
  readonly owner: string;
  /** Pause before a "not found" is looked up once more. */
  readonly recheckMs: number;
  readonly policy: RetryPolicy;
  readonly logger: Logger;
  readonly metrics?: ReconcilerMetrics;
}

/**
 * Reconciles one claimed step (UNKNOWN, or INTENDED whose executor lease lapsed) against the real system by
 * the one lookup rule of core (`settleFromLookup`: "not found" believed only past the tool's commit horizon
 * and `lookupLagMs` since the step's last attempt — or, for a last attempt the vendor answered 429, past
 * that answer and the lag — by the database's clock, and after a re-check `recheckMs` later); then
 * {@link settleReconcile} writes what that proves. Lookups run outside any transaction. Counts and logs the
 * outcome after the commit.
 */
export async function reconcileStep(d: ReconcileStepDeps, step: StepRow): Promise<SettleResult> {
  const log = lazyChildLogger(d.logger, {
    runId: step.run_id,
    stepIdx: step.step_idx,
    key: step.idempotency_key,
    tool: step.tool,
  });
  const tool = d.registry.get(step.tool);
  const { verdict, observations }: Pick<LookupSettlement, 'verdict' | 'observations'> = tool
    ? await settleFromLookup({
        db: d.db,
        tool,
        target: step,
        lastAttemptAt: step.last_attempt_at ?? step.updated_at,
        // The row's attempts and stored error: a last attempt answered 429 needs no commit horizon.
        lastOutcome: step,
        recheckMs: d.recheckMs,
        log,
      })
    : unregistered(step.tool);
  const result = await settleReconcile({
    db: d.db,
    schema: d.schema,
    owner: d.owner,
    seen: step,
    observations,
    verdict,
    policy: d.policy,
    lookupLagMs: lagOf(tool),
    recheckMs: d.recheckMs,
  });
  report(d, log, step, observations, result);
  return result;
}

function report(
  d: ReconcileStepDeps,
  log: Logger,
  step: StepRow,
  observations: readonly LookupObservation[],
  r: SettleResult,
): void {
  const m = d.metrics;
  const errors = observations.filter((o) => o.kind === 'error').length;
  if (errors) m?.lookupErrors.inc({ tool: step.tool }, errors);
  m?.results.inc({ tool: step.tool, outcome: r.outcome });
  // The effect existed after `attempts` sends: how many times the executors tried before it was confirmed.
  if (r.outcome === ReconcileOutcome.CONFIRMED && step.attempts > 0)
    m?.attemptsPerEffect.observe({ tool: step.tool }, step.attempts);
  if (r.duplicates) {
    m?.duplicateEffects.inc({ tool: step.tool });
    // An incident: the real system holds several effects for one intent. Someone must look.
    log.error({ duplicates: r.duplicates, incident: 'duplicate_effect' }, 'duplicate effects under one key');
  }
  if (r.redispatchNo !== undefined) m?.redispatched.inc({ tool: step.tool });
  const fields = { outcome: r.outcome, status: r.status, from: step.status, ...pick(r) };
  switch (r.outcome) {
    case ReconcileOutcome.MANUAL_INTERVENTION:
      log.error(fields, 'step needs a person');
      break;
    case ReconcileOutcome.LOOKUP_ERROR:
      log.warn(fields, 'lookup failed; backing off');
      break;
    default:
      log.info(fields, 'step reconciled');
  }
}

function pick(r: SettleResult): Record<string, unknown> {
  const { redispatchNo, lookupErrors, retryInMs, reason } = r;
  return Object.fromEntries(
    Object.entries({ redispatchNo, lookupErrors, retryInMs, reason }).filter(([, v]) => v !== undefined),
  );
}

const lagOf = (tool: AnyTool | undefined): number => tool?.lookupLagMs ?? 0;

/** A step whose tool this process does not know cannot be looked up: a failed lookup, with the reason. */
function unregistered(name: string): Pick<LookupSettlement, 'verdict' | 'observations'> {
  const err = new ToolNotRegisteredError(name);
  const error = { name: err.name, message: err.message };
  // `at` is evidence only (when this process noticed), never compared with a lease or a deadline.
  const seen: LookupObservation = { kind: 'error', at: new Date(), ms: 0, error };
  return { verdict: { kind: 'lookup-error', error }, observations: [seen] };
}
