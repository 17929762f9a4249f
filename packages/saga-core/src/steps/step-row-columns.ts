import { sql, type RawBuilder } from 'kysely';
import type { StepRow } from '../db/schema.js';

/**
 * The columns of a step as its readers get it (`StepRow`): the `saga_log` row without the standard events it
 * stores (migration 0022; they are read through the view `step_events`). The hot statements return these
 * rather than `*`: 14 fewer columns, three of them timestamps, for `pg` to parse in every row of every call
 * (the API's intake and outcome, the executor's claim, the compensator's read of its runs).
 */
export const STEP_ROW_COLUMNS = [
  'run_id',
  'step_idx',
  'tenant_id',
  'tool',
  'tool_class',
  'tool_version',
  'idempotency_key',
  'payload_hash',
  'step_id',
  'trace_id',
  'span_id',
  'args',
  'compensation',
  'correction',
  'audience',
  'depends_on',
  'created_at',
  'approval_id',
  'compensation_status',
  'reconcile_attempts',
  'next_reconcile_at',
  'reconcile_lease_until',
  'reconcile_lease_owner',
  'status',
  'external_ref',
  'result',
  'error',
  'attempts',
  'last_attempt_at',
  'lease_until',
  'lease_owner',
  'outcome_delivered',
  'updated_at',
] as const satisfies readonly (keyof StepRow)[];

/** A compile-time check that {@link STEP_ROW_COLUMNS} lists every column of `StepRow`. */
type Unlisted = Exclude<keyof StepRow, (typeof STEP_ROW_COLUMNS)[number]>;
export const STEP_ROW_COLUMNS_COMPLETE: [Unlisted] extends [never] ? true : Unlisted = true;

const lists = new Map<string, RawBuilder<unknown>>();

/**
 * {@link STEP_ROW_COLUMNS} as a select or RETURNING list, each qualified by `alias` when given (a plain SQL
 * identifier: the callers' own table aliases). One raw fragment per alias, made once: kysely compiles a
 * statement's template on every execution, and 33 column references cost the API's hot path more than one
 * piece of text.
 */
export function stepRowColumns(alias?: string): RawBuilder<unknown> {
  const key = alias ?? '';
  let list = lists.get(key);
  if (!list) {
    if (alias !== undefined && !/^[a-z_][a-z0-9_]*$/.test(alias))
      throw new Error(`not a table alias: ${alias}`);
    list = sql.raw(STEP_ROW_COLUMNS.map((c) => (alias === undefined ? c : `${alias}.${c}`)).join(', '));
    lists.set(key, list);
  }
  return list;
}
