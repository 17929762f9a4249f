import {
  Audience,
  CompensationStatus,
  CorrectionStatus,
  RunStatus,
  StepStatus,
  openCase,
  transitionRun,
  type CompensationRow,
  type RunRow,
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
 * Ends an unwind that can move no further, in one transaction, from the log alone:
 *
 * - cases: every step whose outcome stayed unknown (MANUAL_INTERVENTION), every compensation past its
 *   budget, and every compensation held up behind those (its dependents could not be undone);
 * - corrections, after every automatic compensation: the stored correction of each step whose effect was
 *   undone or left in place, only when the customer could have seen the original (`audience`);
 * - the run's terminal status: MANUAL_INTERVENTION when a case is open, else PARTIALLY_COMPENSATED naming
 *   each effect left in place (irreversible, or no stored compensation), else COMPENSATED (corrections may
 *   remain open for review).
 *
 * Inserts are `ON CONFLICT DO NOTHING` and the run moves by compare-and-set from COMPENSATING, so a second
 * compensator finishing the same run at once changes nothing.
 */
export async function finishRun(
  trx: SagaTrx,
  steps: readonly StepRow[],
  comps: ReadonlyMap<number, CompensationRow>,
): Promise<RunRow> {
  const first = steps[0];
  if (!first) throw new Error('finishRun needs the steps of a run');
  const { run_id: runId, tenant_id: tenantId } = first;
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
  for (const k of cases) await openCase(trx, { runId, tenantId, ...k });

  const corrections = steps.filter((s) => {
    const c = comps.get(s.step_idx);
    const effectSeen = s.status === StepStatus.CONFIRMED && s.audience.includes(Audience.CUSTOMER);
    const handled = c?.status === CompensationStatus.COMPENSATED || c?.status === CompensationStatus.SKIPPED;
    return effectSeen && handled && s.correction !== null;
  });
  if (corrections.length)
    await trx
      .insertInto('corrections')
      .values(
        corrections.map((s) => ({
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

  const inPlace = steps.filter(leftInPlace);
  const openCorrections = corrections.length ? `; ${corrections.length} correction(s) queued for review` : '';
  // The reason the unwind was asked for ("unwind requested: …", set by requestUnwind) is kept in the
  // terminal reason: the run row is the only place it is stored, and the transition below replaces it.
  const requested = await trx
    .selectFrom('runs')
    .select('status_reason')
    .where('run_id', '=', runId)
    .executeTakeFirst();
  const why = requested?.status_reason ? ` (${requested.status_reason})` : '';
  if (cases.length)
    return transitionRun(trx, {
      runId,
      to: RunStatus.MANUAL_INTERVENTION,
      onlyFrom: [RunStatus.COMPENSATING],
      reason: `needs a person: ${cases.map((k) => k.reason).join('; ')}${why}`,
    });
  if (inPlace.length)
    return transitionRun(trx, {
      runId,
      to: RunStatus.PARTIALLY_COMPENSATED,
      onlyFrom: [RunStatus.COMPENSATING],
      reason: `not undone: ${inPlace.map((s) => `${name(s)} is ${s.tool_class}${s.compensation ? '' : ', no stored compensation'}`).join('; ')}${openCorrections}${why}`,
    });
  return transitionRun(trx, {
    runId,
    to: RunStatus.COMPENSATED,
    onlyFrom: [RunStatus.COMPENSATING],
    reason: `every effect undone${openCorrections}${why}`,
  });
}
