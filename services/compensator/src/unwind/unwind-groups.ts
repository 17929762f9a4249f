import {
  appendStepEvents,
  createStatementGroup,
  firstPerKey,
  stepSlot,
  stepSlotOf,
  type CompensationRow,
  type RunRow,
  type SagaDb,
  type StatementGroup,
  type StepEventInput,
  type StepRow,
} from '@agent-saga/core';
import { claimAttemptBatch, type AttemptClaim } from '../sql/claim-attempt-batch.js';
import { finishRunsBatch, type RunClose } from '../sql/finish-runs-batch.js';
import { planCompensations } from '../sql/plan-compensations.js';
import { readRunStates, type RunState } from '../sql/read-run-states.js';
import { recordAttemptOutcomeBatch, type AttemptOutcomeRecord } from '../sql/record-attempt-outcome-batch.js';

/**
 * The reads and writes that every unwind makes on its way, shared by the unwinds running at once in one
 * process: each kind goes to the database as one statement for all the runs that reach it together
 * (core's `createStatementGroup`: one round trip and one commit for N runs instead of N), so the cost of a
 * one-step unwind is a few rows, not a few dozen round trips. Each statement is all or nothing, and each
 * row in it is a compare-and-set on what its own pass read: grouping changes no decision, and a crash
 * before a group's commit leaves every run of the group where it was. A failed group is re-run one item
 * at a time, so one run's failure fails only that run's pass.
 *
 * - `read`: a run's status, steps, compensations and the database's `now()` (`readRunStates`);
 * - `plan`: the compensation rows of a run's settled steps (`planCompensations`; resolves the rows this
 *   statement inserted);
 * - `events`: the evidence events a pass writes before it decides (lookups by the compensation key);
 * - `claim`: an attempt's intent, before the call (`claimAttemptBatch`; null: the row moved meanwhile);
 * - `outcome`: an attempt's outcome under its lease (`recordAttemptOutcomeBatch`; null: lease lost);
 * - `finish`: a run's terminal move when nothing else is written (`finishRunsBatch`; null: not moved).
 *
 * Every statement is prepared and written so that any plan finds rows by primary key (see `readRunStates`,
 * `finishRunsBatch`). An unwind starts on a `compensations` table with no rows and no statistics, where a
 * hash join over a sequential scan is the cheapest plan; a prepared statement that kept that plan read the
 * whole table on every statement as it grew (at 20,000 runs, 23 million rows read in a bench). Connections
 * plan each execution (`plan_cache_mode = force_custom_plan`, core's `pgConnectionConfig`), so no plan made
 * on the empty table is kept; planning is shared by the runs of a group.
 *
 * The rarer moves (a lookup that finds the compensation done, a precondition's verdict, a lease expired,
 * giving up, a run with cases or corrections) stay one row per transaction (core's `transitionCompensation`,
 * `finishRun`).
 */
export interface UnwindGroups {
  readonly read: StatementGroup<string, RunState>;
  readonly plan: StatementGroup<readonly StepRow[], readonly CompensationRow[]>;
  readonly events: StatementGroup<readonly StepEventInput[], void>;
  readonly claim: StatementGroup<AttemptClaim, CompensationRow | null>;
  readonly outcome: StatementGroup<AttemptOutcomeRecord, CompensationRow | null>;
  readonly finish: StatementGroup<RunClose, RunRow | null>;
}

/**
 * Why 100: twice the bench's COMPENSATOR_CONCURRENCY (50); a pass may claim up to COMPENSATOR_PARALLELISM
 * compensations of its run at once, so a group of one kind rarely holds more; a statement of 100 rows is
 * still a few milliseconds.
 */
const MAX_GROUP = 100;

/** The statement groups of one compensator process; `workerId` holds the leases of its attempts. */
export function createUnwindGroups(db: SagaDb, workerId: string): UnwindGroups {
  return {
    read: createStatementGroup({
      maxSize: MAX_GROUP,
      async run(runIds) {
        const states = await readRunStates(db, [...new Set(runIds)]);
        return runIds.map((id) => states.get(id)!);
      },
    }),
    plan: createStatementGroup({
      maxSize: MAX_GROUP,
      async run(stepLists) {
        // One row per step: a step asked for twice in a group (two passes of one run) is planned once, and
        // the pass that did not get its row reads it back.
        const unique = firstPerKey(stepLists.flat(), (s) => stepSlot(s.run_id, s.step_idx));
        const rows = await planCompensations(db, [...unique.values()]);
        const byStep = new Map(rows.map((r) => [stepSlot(r.run_id, r.step_idx), r]));
        const given = new Set<string>();
        return stepLists.map((steps) =>
          steps.flatMap((s) => {
            const id = stepSlot(s.run_id, s.step_idx);
            const row = byStep.get(id);
            if (!row || given.has(id)) return [];
            given.add(id);
            return [row];
          }),
        );
      },
    }),
    events: createStatementGroup({
      maxSize: MAX_GROUP,
      async run(lists) {
        await appendStepEvents(db, lists.flat());
        return lists.map(() => undefined);
      },
    }),
    claim: createStatementGroup({
      maxSize: MAX_GROUP,
      async run(claims) {
        const firsts = firstPerStep(claims);
        const rows = await claimAttemptBatch(db, workerId, [...firsts.values()]);
        return matchRows(claims, firsts, rows);
      },
    }),
    outcome: createStatementGroup({
      maxSize: MAX_GROUP,
      async run(records) {
        const firsts = firstPerStep(records);
        const rows = await recordAttemptOutcomeBatch(db, workerId, [...firsts.values()]);
        return matchRows(records, firsts, rows);
      },
    }),
    finish: createStatementGroup({
      maxSize: MAX_GROUP,
      async run(closes) {
        const firsts = firstPerKey(closes, (c) => c.runId);
        const rows = await finishRunsBatch(db, [...firsts.values()]);
        const byRun = new Map(rows.map((r) => [r.run_id, r]));
        return closes.map((c) => (firsts.get(c.runId) === c ? (byRun.get(c.runId) ?? null) : null));
      },
    }),
  };
}

/**
 * One item per compensation in a statement: a second one for the same step in the same group (two passes
 * of one run racing in this process) gets null, as a compare-and-set that lost would, and writes nothing.
 */
function firstPerStep<T extends { readonly runId: string; readonly stepIdx: number }>(
  items: readonly T[],
): Map<string, T> {
  return firstPerKey(items, stepSlotOf);
}

function matchRows<T extends { readonly runId: string; readonly stepIdx: number }>(
  items: readonly T[],
  firsts: ReadonlyMap<string, T>,
  rows: readonly CompensationRow[],
): (CompensationRow | null)[] {
  const byStep = new Map(rows.map((r) => [stepSlot(r.run_id, r.step_idx), r]));
  return items.map((it) => {
    const id = stepSlotOf(it);
    return firsts.get(id) === it ? (byStep.get(id) ?? null) : null;
  });
}
