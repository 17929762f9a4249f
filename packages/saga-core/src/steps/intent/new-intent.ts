import type { OperationIdentity } from './find-duplicate-operation.js';
import type { IntentInput } from './record-intent.js';

/**
 * A new INTENDED step at an index the caller named, as the grouped intake (`recordNewIntents`) takes it:
 * what `recordIntent` writes for it, without the transaction's options (no approval, no NOTIFY, one grace
 * for the whole group). The caller expects the run to be RUNNING with no pivot staged, no row at
 * `stepIdx`, no UNKNOWN step below it and no earlier step of the same `operation`; `recordNewIntents`
 * writes the step only where that holds.
 */
export type NewIntent = Omit<
  IntentInput,
  'status' | 'approvalId' | 'stepId' | 'schema' | 'notifyRelay' | 'relayGraceMs'
> & {
  /** The operation the step performs (`operationIdentity`); null for a repeatable tool (never a duplicate). */
  readonly operation: OperationIdentity | null;
  /**
   * Set when the process writing the step will also make its first attempt (the API's inline executor):
   * the step is written already claimed, see {@link IntakeClaim}. Absent: INTENDED with no lease, and an
   * unpublished outbox message for the fast path's publish or the relay.
   */
  readonly claim?: IntakeClaim;
};

/**
 * A step claimed in the statement that writes it, by the process that will run its first attempt right
 * after the commit: the row is written with that process's lease (`lease_owner`, `lease_until` = now plus
 * `leaseMs` rounded up to whole milliseconds), `attempts` 1 and `last_attempt_at` now, and its ATTEMPT
 * event after the intake event (detail `jobId`: the first dispatch's id, as an executor's claim records
 * it). It gets **no outbox message**.
 *
 * Why this is as safe as the claim it replaces: it is the state the executor's claim would have written a
 * moment later, with the same lease, so every recovery path is the one of an executor that claimed and
 * died. A process killed after this commit, before or during the call, leaves an INTENDED row whose lease
 * lapses into the reconciler's lookup by key (it never re-sends blindly, and the republisher skips a leased
 * row); nothing is ever called without this row committed first ("no row, no call").
 *
 * Why no outbox message: an outbox message exists so that a committed intent reaches an executor even if
 * the process that wrote it dies before handing it over (the relay publishes what nobody claimed). A step
 * written claimed has been handed over in its own commit, to the lease, whose lapse is the recovery; the
 * message would be born published and never read (the relay, the republisher and the stale-outbox scan
 * all skip it), costing an insert into four indexes. Its dispatch number 1 is still taken: a re-dispatch
 * after NOT_EXECUTED is number 2 (`enqueueNextDispatch`), and the ATTEMPT event names the first job id.
 *
 * What it costs: a crash in the moment between the commit and the call is recovered after the lease and a
 * lookup rather than by the relay's re-publish after its grace. What it saves: the claim statement (a round
 * trip, a commit, the row's second version) and the outbox row (docs/benchmarks.md).
 */
export interface IntakeClaim {
  /** The lease owner: the claiming process's worker id. */
  readonly owner: string;
  /** The lease: the tool's timeout plus the lease margin, as the executor's claim would take it. */
  readonly leaseMs: number;
  /** The cause of the ATTEMPT event (who claimed: `api: claimed at intake`). */
  readonly cause: string;
}
