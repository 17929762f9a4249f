import {
  executeDispatch,
  intentOf,
  logIntended,
  planOf,
  recordNewIntents,
  StepStatus,
  type IntakeClaim,
  type IntakeOutcome,
  type IntakeRequest,
  type NewIntent,
  type SagaDb,
  type StepRow,
} from '@agent-saga/core';
import { createStatementGroup, type StatementGroup } from '@agent-saga/core';

/**
 * The intakes of concurrent calls that each name a new step, grouped into one statement and one commit
 * (see `recordNewIntents`): group commit for the most common call, the next step of a run.
 */
export type IntakeGroup = StatementGroup<NewIntent, StepRow | null>;

/** Why 64: more concurrent intakes than the API holds at the bench's 50 in flight; the statement binds
 * one array per column whatever the group's size, so its text (and its prepared plan) never changes. */
const MAX_GROUP = 64;

export function createIntakeGroup(db: SagaDb, relayGraceMs: number): IntakeGroup {
  return createStatementGroup({
    maxSize: MAX_GROUP,
    run: (items) => recordNewIntents(db, items, relayGraceMs),
  });
}

/**
 * The grouped intake of a call, when it can decide the call alone: the fast path is on (the API publishes
 * the job, so no NOTIFY), the call names its step index (so the key is known before anything is read), its
 * `dependsOn` is valid, and the plan dispatches at once (a step held for approval writes an approval first:
 * the intake transaction's job). Null otherwise, and null when the grouped statement found the step taken,
 * the run not RUNNING, an earlier step UNKNOWN or an earlier step of the same operation (a replanned
 * duplicate): then the intake transaction decides, by the rules of step resolution and of duplicates, with
 * nothing written yet (it reads the earlier step under the run lock and refuses DUPLICATE_OPERATION).
 *
 * With `claim` (a slot of the API's inline executor), the step is written claimed under it, with no outbox
 * message; the outcome's `dispatch` is then still the step's first dispatch (its job id, in the ATTEMPT event).
 */
export async function groupedIntake(
  group: IntakeGroup,
  req: IntakeRequest,
  claim?: IntakeClaim,
): Promise<IntakeOutcome | null> {
  const stepIdx = req.stepIdx;
  if (!req.fastPath || stepIdx === undefined || req.dependsOn?.some((d) => d >= stepIdx)) return null;
  const plan = planOf(req, stepIdx);
  if (plan.status !== StepStatus.INTENDED) return null;
  const intent = intentOf(req, stepIdx, plan);
  const row = await group.submit(claim ? { ...intent, claim } : intent);
  if (!row) return null;
  logIntended(req, stepIdx, plan);
  return { kind: 'step', step: row, replayed: false, dispatch: executeDispatch(row, 1), delivered: false };
}
