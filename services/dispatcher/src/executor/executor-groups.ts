import {
  claimStepBatch,
  recordOutcomeBatch,
  type ClaimRequest,
  type OutcomeRecord,
  type SagaDb,
  type StepRow,
  stepSlot,
  stepSlotOf,
  withChanges,
} from '@agent-saga/core';
import { createStatementGroup, firstPerKey, type StatementGroup } from '@agent-saga/core';

/** An outcome to record, with the step its attempt holds (see `recordOutcomeBatch`: its changes come back). */
export type GroupedOutcome = OutcomeRecord & { readonly leaseOwner: string; readonly held: StepRow };

/**
 * The two writes of every job that concurrent jobs of one executor process share, each grouped into one
 * statement and one commit (see core's `createStatementGroup`):
 * - `claim`: resolves the claimed row, or null when the step was not claimable by the grouped statement
 *   (duplicate, held, settled, missing, locked by another writer): the job then takes `claimStepSlow`;
 * - `outcome`: resolves the recorded row, or null when the compare-and-set matched nothing: the job then
 *   takes `recordOutcomeSlow` (late outcome, or dropped).
 */
export interface ExecutorGroups {
  readonly claim: StatementGroup<ClaimRequest, StepRow | null>;
  /** Each outcome with the step as its claim left it (`held`): the group answers the recorded row. */
  readonly outcome: StatementGroup<GroupedOutcome, StepRow | null>;
}

/**
 * Why 50: the executor's default concurrency, so a full group is every job of the process; a bigger
 * statement would only wait for jobs that cannot exist.
 */
const MAX_GROUP = 50;

export function createExecutorGroups(d: {
  readonly db: SagaDb;
  readonly workerId: string;
  readonly schema: string;
  readonly leaseMsByTool: ReadonlyMap<string, number>;
  readonly defaultLeaseMs: number;
}): ExecutorGroups {
  return {
    claim: createStatementGroup({
      maxSize: MAX_GROUP,
      async run(items) {
        // One request per key: a second delivery of a key in the same group goes to the slow path, where it
        // finds the first one's lease.
        const firsts = firstPerKey(items, (it) => it.key);
        const rows = await claimStepBatch(d.db, [...firsts.values()], {
          worker: d.workerId,
          leaseMsByTool: d.leaseMsByTool,
          defaultLeaseMs: d.defaultLeaseMs,
        });
        const byKey = new Map(rows.map((r) => [r.idempotency_key, r]));
        return items.map((it) => (firsts.get(it.key) === it ? (byKey.get(it.key) ?? null) : null));
      },
    }),
    outcome: createStatementGroup({
      maxSize: MAX_GROUP,
      async run(items) {
        // A step is held by one lease, so one outcome per step; a second one for the same step (impossible
        // under the lease) would go to the slow path rather than into the same statement.
        const firsts = firstPerKey(items, stepSlotOf);
        const changes = await recordOutcomeBatch(d.db, d.workerId, [...firsts.values()], d.schema);
        const byStep = new Map(changes.map((c) => [stepSlot(c.run_id, c.step_idx), c]));
        return items.map((it) => {
          const recorded = firsts.get(stepSlotOf(it)) === it ? byStep.get(stepSlotOf(it)) : undefined;
          return recorded ? withChanges(it.held, recorded) : null;
        });
      },
    }),
  };
}
