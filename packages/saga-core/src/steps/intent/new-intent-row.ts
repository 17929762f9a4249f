import type { StepRow } from '../../db/schema.js';
import { traceColumns } from '../../tracing/stored-trace.js';
import type { TraceContext } from '../../tracing/trace-context.js';
import { StepStatus } from '../step-status.js';
import type { IntakeClaim, NewIntent } from './new-intent.js';

/**
 * A claim's lease in whole milliseconds (rounded up, never shorter than asked), as the grouped intake
 * writes it and as {@link newIntentRow} answers it: a fraction would be kept to the microsecond by Postgres
 * and dropped by a `Date`, and the two `lease_until` would differ.
 */
export function claimLeaseMs(claim: IntakeClaim): number {
  return Math.ceil(claim.leaseMs);
}

/**
 * What the grouped intake sent of a step as text, so that the row it answers holds what the log holds: the
 * JSON columns as the JSON the statement bound (`JSON.stringify` of the item's values).
 */
export interface NewIntentTexts {
  readonly args: string;
  readonly compensation: string | null;
  readonly correction: string | null;
}

/**
 * The row {@link recordNewIntents} wrote for `item`, made from the item and the one value the statement
 * returns, the row's `created_at` (its statement's `now()`), rather than read back: on the API's hot path
 * the row's 33 columns are not formatted by Postgres nor parsed by `pg` again for every call (three
 * `bytea`, the arguments' and compensation's JSON, two arrays, four timestamps).
 *
 * Why it is the stored row, column by column (`record-new-intents.test.ts` compares the two):
 * - the fixed columns are the item's, as the statement binds them; the JSON columns are parsed back from the
 *   text it bound (`texts`), so a value JSON does not keep (a `Date`, an `undefined` member) reads here as
 *   the log holds it. The one difference that remains is the order of an object's keys (`jsonb` keeps its
 *   own), which no reader of a step may depend on;
 * - the statement writes every changing column as a new INTENDED step's: no outcome, no reconciliation, not
 *   delivered, and with a `claim` the lease of it (`attempts` 1, `last_attempt_at` now, `lease_until` now
 *   plus {@link claimLeaseMs}); its four timestamps are all the statement's `now()`
 *   (one instant per transaction), which is `createdAt`;
 * - the grouped intake never writes a held step, a bound run's step or an approval: `step_id` and
 *   `approval_id` are null.
 */
export function newIntentRow(
  item: NewIntent,
  trace: TraceContext,
  texts: NewIntentTexts,
  createdAt: Date,
): StepRow {
  const claim = item.claim;
  return {
    run_id: item.runId,
    step_idx: item.stepIdx,
    tenant_id: item.tenantId,
    tool: item.tool,
    tool_class: item.toolClass,
    tool_version: item.toolVersion,
    idempotency_key: item.idempotencyKey,
    payload_hash: Buffer.from(item.payloadHash, 'hex'),
    step_id: null,
    ...traceColumns(trace),
    args: JSON.parse(texts.args) as Record<string, unknown>,
    compensation:
      texts.compensation === null ? null : (JSON.parse(texts.compensation) as StepRow['compensation']),
    correction: texts.correction === null ? null : (JSON.parse(texts.correction) as Record<string, unknown>),
    audience: [...item.audience],
    depends_on: item.dependsOn ? [...item.dependsOn] : null,
    created_at: createdAt,
    approval_id: null,
    compensation_status: null,
    reconcile_attempts: 0,
    next_reconcile_at: null,
    reconcile_lease_until: null,
    reconcile_lease_owner: null,
    status: StepStatus.INTENDED,
    external_ref: null,
    result: null,
    error: null,
    attempts: claim ? 1 : 0,
    last_attempt_at: claim ? createdAt : null,
    lease_until: claim ? new Date(createdAt.getTime() + claimLeaseMs(claim)) : null,
    lease_owner: claim ? claim.owner : null,
    outcome_delivered: false,
    updated_at: createdAt,
  };
}
