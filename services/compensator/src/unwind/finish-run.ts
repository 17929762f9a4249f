import {
  Audience,
  checkRunInvariant,
  CompensationStatus,
  CorrectionStatus,
  gateOnInvariant,
  InvariantUnverifiedError,
  lockRunById,
  RunStatus,
  StepStatus,
  openCase,
  transitionRun,
  type CompensationRow,
  type InvariantCheck,
  type InvariantChecker,
  type RunRow,
  type SagaDb,
  type SagaTrx,
  type StepRow,
} from '@agent-saga/core';
import { leftInPlace } from '../sql/plan-compensations.js';
import { isExhausted } from './compensation-order.js';

interface CaseInput {
  readonly stepIdx: number;
  readonly reason: string;
  readonly evidence: Record<string, unknown>;
}

/**
 * How an unwind that can move no further ends, decided from the log alone (pure; `finishRun` writes it):
 *
 * - cases: every step whose outcome stayed unknown (MANUAL_INTERVENTION), every compensation past its
 *   budget, and every compensation held up behind those (its dependents could not be undone);
 * - corrections, after every automatic compensation: the stored correction of each step whose effect was
 *   undone or left in place, only when the customer could have seen the original (`audience`);
 * - the run's terminal status: MANUAL_INTERVENTION when a case is open, else PARTIALLY_COMPENSATED naming
 *   each effect left in place (irreversible, or no stored compensation), else COMPENSATED (corrections may
 *   remain open for review).
 *
 * `reason` is the terminal reason without the reason the unwind was asked for, which the write appends
 * from the run row (the only place it is stored).
 */
export interface FinishDecision {
  readonly runId: string;
  readonly tenantId: string;
  readonly cases: readonly CaseInput[];
  readonly corrections: readonly StepRow[];
  readonly to: FinishStatus;
  readonly reason: string;
}

/** The terminal statuses of an unwind. */
export type FinishStatus =
  | typeof RunStatus.MANUAL_INTERVENTION
  | typeof RunStatus.PARTIALLY_COMPENSATED
  | typeof RunStatus.COMPENSATED;

export function decideFinish(
  run: { readonly runId: string; readonly tenantId: string },
  steps: readonly StepRow[],
  comps: ReadonlyMap<number, CompensationRow>,
): FinishDecision {
  const { runId, tenantId } = run;
  const name = (s: StepRow) => `step ${s.step_idx} (${s.tool})`;

  const cases: CaseInput[] = [];
  for (const s of steps) {
    const c = comps.get(s.step_idx);
    if (s.status === StepStatus.MANUAL_INTERVENTION)
      cases.push({
        stepIdx: s.step_idx,
        reason: `${name(s)}: outcome unknown; not compensated`,
        evidence: { error: s.error },
      });
    else if (c && isExhausted(c))
      cases.push({
        stepIdx: s.step_idx,
        reason: `${name(s)}: compensation ${c.tool ?? ''} failed: ${c.reason ?? 'attempt budget exhausted'}`,
        evidence: { attempts: c.attempts, error: c.error, key: c.idempotency_key },
      });
    else if (c && (c.status === CompensationStatus.PENDING || c.status === CompensationStatus.FAILED))
      cases.push({
        stepIdx: s.step_idx,
        reason: `${name(s)}: not compensated: a step that depends on it could not be undone`,
        evidence: { compensationStatus: c.status },
      });
  }

  const corrections = steps.filter((s) => {
    const c = comps.get(s.step_idx);
    const effectSeen = s.status === StepStatus.CONFIRMED && s.audience.includes(Audience.CUSTOMER);
    const handled = c?.status === CompensationStatus.COMPENSATED || c?.status === CompensationStatus.SKIPPED;
    return effectSeen && handled && s.correction !== null;
  });

  const inPlace = steps.filter(leftInPlace);
  const openCorrections = corrections.length ? `; ${corrections.length} correction(s) queued for review` : '';
  const decided = { runId, tenantId, cases, corrections };
  if (cases.length)
    return {
      ...decided,
      to: RunStatus.MANUAL_INTERVENTION,
      reason: `needs a person: ${cases.map((k) => k.reason).join('; ')}`,
    };
  if (inPlace.length)
    return {
      ...decided,
      to: RunStatus.PARTIALLY_COMPENSATED,
      reason: `not undone: ${inPlace.map((s) => `${name(s)} is ${s.tool_class}${s.compensation ? '' : ', no stored compensation'}`).join('; ')}${openCorrections}`,
    };
  // A run unwound before any step reached the log (its first call never arrived, or was refused) has
  // nothing to undo: COMPENSATED, saying so, rather than an unwind that can never end.
  if (steps.length === 0)
    return { ...decided, to: RunStatus.COMPENSATED, reason: 'nothing to undo: no step in the log' };
  return { ...decided, to: RunStatus.COMPENSATED, reason: `every effect undone${openCorrections}` };
}

/**
 * The invariant check of a decision to call the run COMPENSATED, made before the ending transaction and
 * outside any (the lookups are slow HTTP reads); undefined for the other ends, which claim nothing about
 * the business state being whole. An unbound run's check is `unbound` and changes nothing.
 */
export async function checkCompensated(
  db: SagaDb,
  d: FinishDecision,
  bound: boolean,
  invariants: InvariantChecker | undefined,
): Promise<InvariantCheck | undefined> {
  if (d.to !== RunStatus.COMPENSATED) return undefined;
  // An unbound run (as this pass read it: a binding never changes) has nothing to check: no read.
  if (!bound) return { kind: 'unbound' };
  return checkRunInvariant(db, { runId: d.runId }, RunStatus.COMPENSATED, invariants);
}

/**
 * Whether `finishRunsBatch` may write the decision: nothing to insert beside the run's move, and no
 * invariant to apply under the run's lock (a bound run's COMPENSATED goes through `finishRun`).
 */
export function closesRunOnly(d: FinishDecision, check?: InvariantCheck): boolean {
  const gated = check !== undefined && check.kind !== 'unbound' && check.kind !== 'no_invariant';
  return d.cases.length === 0 && d.corrections.length === 0 && !gated;
}

/**
 * Writes a {@link FinishDecision} in one transaction: its cases, its corrections, and the run's move to
 * its terminal status with the reason the unwind was asked for ("unwind requested: …", set by
 * requestUnwind) kept in the terminal reason, since the transition replaces it.
 *
 * Inserts are `ON CONFLICT DO NOTHING` and the run moves by compare-and-set from COMPENSATING, so a second
 * compensator finishing the same run at once changes nothing. A decision with neither cases nor corrections
 * may instead go to `finishRunsBatch`, which writes the same move for many runs in one statement.
 */
export async function finishRun(trx: SagaTrx, d: FinishDecision, check?: InvariantCheck): Promise<RunRow> {
  const { runId, tenantId } = d;
  const decided = await applyInvariant(trx, d, check);
  for (const k of d.cases) await openCase(trx, { runId, tenantId, ...k });
  if (d.corrections.length)
    await trx
      .insertInto('corrections')
      .values(
        d.corrections.map((s) => ({
          run_id: runId,
          step_idx: s.step_idx,
          tenant_id: tenantId,
          command: JSON.stringify(s.correction),
          audience: s.audience,
          status: CorrectionStatus.OPEN,
        })),
      )
      .onConflict((oc) => oc.columns(['run_id', 'step_idx']).doNothing())
      .execute();
  const requested = await trx
    .selectFrom('runs')
    .select('status_reason')
    .where('run_id', '=', runId)
    .executeTakeFirst();
  return transitionRun(trx, {
    runId,
    to: decided.to,
    onlyFrom: [RunStatus.COMPENSATING],
    reason: `${decided.reason}${requestedReasonSuffix(requested?.status_reason ?? null)}`,
  });
}

/**
 * COMPENSATED only on a bound run's invariant holding (`gateOnInvariant`, under the run's lock, on the
 * check made before): it fails → PARTIALLY_COMPENSATED with the clause in the reason and a case (every
 * compensation returned, yet the real systems are not back to "nothing happened": something is left in
 * place, by the run or by a person); it could not be checked → {@link InvariantUnverifiedError}, nothing
 * written, and the run stays COMPENSATING for the next pass to check again (a vendor outage is retried,
 * never passed over; a run left so for long shows in `saga_stuck_runs`). Other ends pass unchanged.
 */
async function applyInvariant(
  trx: SagaTrx,
  d: FinishDecision,
  check: InvariantCheck | undefined,
): Promise<Pick<FinishDecision, 'to' | 'reason'>> {
  if (d.to !== RunStatus.COMPENSATED) return d;
  const run = await lockRunById(trx, d.runId);
  if (!run) return d;
  const gate = await gateOnInvariant(trx, run, RunStatus.COMPENSATED, check);
  if (gate.kind === 'pass') return d;
  if (gate.kind === 'recheck')
    throw new InvariantUnverifiedError(d.runId, gate.definition, gate.why, gate.stale);
  return {
    to: RunStatus.PARTIALLY_COMPENSATED,
    reason: `every compensation returned, but the ${gate.reason}`,
  };
}

/** ` (unwind requested: …)`: how the reason the unwind was asked for ends the terminal reason. */
export function requestedReasonSuffix(statusReason: string | null): string {
  return statusReason ? ` (${statusReason})` : '';
}
