import { confirmedEffectColumns } from './confirmed-effect-columns.js';
import type { SagaDb } from '../../db/connect.js';
import type { StepRow } from '../../db/schema.js';
import { InvalidTransitionError } from '../../errors/errors.js';
import { StepEventKind } from '../step-event-kind.js';
import { StepStatus } from '../step-status.js';
import { appendStepEvent } from '../append-event.js';
import { executorCause, outcomeDetail, recordOutcomeBatch } from './record-outcome-batch.js';
import type { StepOutcome } from './step-outcome.js';
import { transitionStep } from '../transition-step.js';
import { withChanges } from '../step-row-columns.js';

/** Parameters of {@link recordOutcome}. */
export interface RecordOutcomeInput {
  readonly runId: string;
  readonly stepIdx: number;
  /** The lease owner that claimed the step: only its own lease lets it write the outcome. */
  readonly leaseOwner: string;
  readonly outcome: StepOutcome;
  /** Milliseconds the tool took, for the event. */
  readonly durationMs?: number;
  readonly schema: string;
}

/**
 * - `recorded`: INTENDED → the outcome's status, under this worker's lease.
 * - `late`: the lease had expired and the step was moved to UNKNOWN meanwhile, but the tool did return an
 *   effect: recorded as UNKNOWN → CONFIRMED with cause `late outcome`.
 * - `dropped`: the step had moved on (`status`) and the outcome may not overwrite it; an ATTEMPT event
 *   keeps what the tool said, for people.
 */
export type RecordOutcomeResult =
  | { readonly kind: 'recorded'; readonly row: StepRow }
  | { readonly kind: 'late'; readonly row: StepRow }
  | { readonly kind: 'dropped'; readonly status: string | null };

/** Cause of the UNKNOWN → CONFIRMED transition when an effect arrives after its lease expired. */
export const LATE_OUTCOME_CAUSE = 'late outcome';

/**
 * Records the outcome of an attempt in one transaction with its event, by compare-and-set:
 * `INTENDED → CONFIRMED | FAILED | UNKNOWN WHERE lease_owner = $leaseOwner`, clearing the lease.
 * A settled status is never overwritten; an effect that arrives after its step was moved to UNKNOWN (lease
 * expiry) is the one late write allowed, because UNKNOWN → CONFIRMED is exactly what a lookup would do.
 * `held` is the step as the attempt's claim left it: the recorded row is it with the outcome's changes.
 */
export async function recordOutcome(
  db: SagaDb,
  o: RecordOutcomeInput,
  held: StepRow,
): Promise<RecordOutcomeResult> {
  // The common case in one statement (one round trip, one commit): see recordOutcomeBatch.
  const [fast] = await recordOutcomeBatch(db, o.leaseOwner, [o], o.schema);
  if (fast) return { kind: 'recorded', row: withChanges(held, fast) };
  return recordOutcomeSlow(db, o);
}

/**
 * The slow path of an outcome that the one-statement record did not write (the step is no longer INTENDED
 * under this lease): in one transaction, tries the compare-and-set again under the row lock, then records
 * a late effect (UNKNOWN → CONFIRMED) or keeps the outcome as an ATTEMPT event only.
 */
export async function recordOutcomeSlow(db: SagaDb, o: RecordOutcomeInput): Promise<RecordOutcomeResult> {
  const { outcome } = o;
  const patch =
    outcome.status === StepStatus.CONFIRMED
      ? { ...confirmedEffectColumns(outcome.effect), error: null }
      : { error: JSON.stringify(outcome.error) };
  const detail = outcomeDetail(o);
  return db.transaction().execute(async (trx): Promise<RecordOutcomeResult> => {
    try {
      const row = await transitionStep(trx, {
        runId: o.runId,
        stepIdx: o.stepIdx,
        to: outcome.status,
        onlyFrom: [StepStatus.INTENDED],
        leaseOwner: o.leaseOwner,
        cause: executorCause(outcome.status),
        detail,
        patch: { ...patch, lease_until: null, lease_owner: null },
        schema: o.schema,
      });
      return { kind: 'recorded', row };
    } catch (err) {
      if (!(err instanceof InvalidTransitionError)) throw err;
      // A zero-row compare-and-set leaves the transaction usable: decide from the state it reported.
      if (outcome.status === StepStatus.CONFIRMED && err.from === StepStatus.UNKNOWN) {
        const row = await transitionStep(trx, {
          runId: o.runId,
          stepIdx: o.stepIdx,
          to: StepStatus.CONFIRMED,
          onlyFrom: [StepStatus.UNKNOWN],
          cause: LATE_OUTCOME_CAUSE,
          detail: { ...detail, leaseOwner: o.leaseOwner },
          patch,
          schema: o.schema,
        });
        return { kind: 'late', row };
      }
      await appendStepEvent(trx, {
        runId: o.runId,
        stepIdx: o.stepIdx,
        kind: StepEventKind.ATTEMPT,
        cause: `executor: outcome not recorded, step was ${err.from ?? '(missing)'}`,
        detail: {
          ...detail,
          leaseOwner: o.leaseOwner,
          outcome: outcome.status,
          ...(outcome.status === StepStatus.CONFIRMED
            ? { externalRef: outcome.effect.externalRef, result: outcome.effect.result }
            : {}),
        },
      });
      return { kind: 'dropped', status: err.from };
    }
  });
}
