import { sql, type RawBuilder, type Updateable } from 'kysely';
import type { SagaLogTable, StepRow } from '../db/schema.js';

/**
 * The columns of a step that its intake writes once and nothing changes after: what the step is (its run,
 * index, tool, key, arguments, compensation, audience, trace) as opposed to where it stands. Every other
 * column of a step is a {@link STEP_CHANGING_COLUMNS} one. {@link StepPatch}, the
 * type of every update a transition makes, leaves these out, so no code path can change one without this
 * list changing first.
 *
 * Why it is written down: a statement that updates a step the caller already holds (the outcome of an
 * attempt, under the lease its claim took) returns only the changing columns and the caller keeps the rest
 * from its row ({@link withChanges}): on the API's hot path, half the columns of each outcome row not parsed
 * (three `bytea`, the arguments' and compensation's JSON, an array, a timestamp).
 */
export const STEP_FIXED_COLUMNS = [
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
] as const satisfies readonly (keyof StepRow)[];
export type StepFixedColumn = (typeof STEP_FIXED_COLUMNS)[number];

/** What a transition may change of a step: never a column its intake fixed. */
export type StepPatch = Omit<Updateable<SagaLogTable>, StepFixedColumn>;

/** The columns of a step that its attempts, outcomes, reconciliation and unwinding change. */
export const STEP_CHANGING_COLUMNS = [
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
] as const satisfies readonly Exclude<keyof StepRow, StepFixedColumn>[];

/**
 * The columns of a step as its readers get it (`StepRow`): the `saga_log` row without the standard events it
 * stores (migration 0022; they are read through the view `step_events`). The statements that answer whole
 * steps return these rather than `*`: 14 fewer columns, three of them timestamps, for `pg` to parse in every
 * row (the executor's claim, the delivered marks, the compensator's read of its runs; the API's grouped
 * intake and outcome answer less: `newIntentRow`, {@link withChanges}). The fixed columns first, then the
 * changing ones.
 */
export const STEP_ROW_COLUMNS = [...STEP_FIXED_COLUMNS, ...STEP_CHANGING_COLUMNS] as const;

/** A compile-time check that {@link STEP_ROW_COLUMNS} lists every column of `StepRow`. */
type Unlisted = Exclude<keyof StepRow, (typeof STEP_ROW_COLUMNS)[number]>;
export const STEP_ROW_COLUMNS_COMPLETE: [Unlisted] extends [never] ? true : Unlisted = true;

/** A step's changing columns as a statement returns them, with the step's primary key to match them by. */
export type StepChanges = Pick<StepRow, 'run_id' | 'step_idx' | Exclude<keyof StepRow, StepFixedColumn>>;

/**
 * A step's primary key `(run_id, step_idx)` as one string: the key of a map from a group's items to the rows
 * its statement returned for them (a grouped statement answers rows, the caller matches them to items).
 */
export function stepSlot(runId: string, stepIdx: number): string {
  return `${runId}\u0000${stepIdx}`;
}

/** {@link stepSlot} of a group's item, which names its step as `runId` and `stepIdx`. */
export function stepSlotOf(item: { readonly runId: string; readonly stepIdx: number }): string {
  return stepSlot(item.runId, item.stepIdx);
}

/** The step `held` (read or written earlier by the caller) with the `changes` a statement returned for it. */
export function withChanges(held: StepRow, changes: StepChanges): StepRow {
  return { ...held, ...changes };
}

/**
 * `run_id`, `step_idx` and {@link STEP_CHANGING_COLUMNS} as a select or RETURNING list (a `StepChanges`),
 * each qualified by `alias` when given (see {@link stepRowColumns}).
 */
export function stepChangesColumns(alias?: string): RawBuilder<unknown> {
  return columnList(`changes ${alias ?? ''}`, ['run_id', 'step_idx', ...STEP_CHANGING_COLUMNS], alias);
}

const lists = new Map<string, RawBuilder<unknown>>();

/**
 * {@link STEP_ROW_COLUMNS} as a select or RETURNING list, each qualified by `alias` when given (a plain SQL
 * identifier: the callers' own table aliases). One raw fragment per alias, made once: kysely compiles a
 * statement's template on every execution, and 33 column references cost the API's hot path more than one
 * piece of text.
 */
export function stepRowColumns(alias?: string): RawBuilder<unknown> {
  return columnList(`row ${alias ?? ''}`, STEP_ROW_COLUMNS, alias);
}

function columnList(key: string, columns: readonly string[], alias: string | undefined): RawBuilder<unknown> {
  let list = lists.get(key);
  if (!list) {
    if (alias !== undefined && !/^[a-z_][a-z0-9_]*$/.test(alias))
      throw new Error(`not a table alias: ${alias}`);
    list = sql.raw(columns.map((c) => (alias === undefined ? c : `${alias}.${c}`)).join(', '));
    lists.set(key, list);
  }
  return list;
}
