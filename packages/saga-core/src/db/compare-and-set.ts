import type { Selectable, Transaction, UpdateObject } from 'kysely';
import type { SagaTrx } from './connect.js';
import type { Database } from './schema.js';

/** The tables whose rows move through a state machine: each has a `status` column. */
export type MachineTable = 'saga_log' | 'runs' | 'compensations' | 'corrections' | 'cases' | 'approvals';

/** The status type of a machine table's rows. */
export type StatusOf<T extends MachineTable> = Database[T]['status'];

/** A state machine: each target status lists the only statuses a row may move to it from. */
export type TransitionTable<S extends string> = { readonly [To in S]: readonly S[] };

/** A column of a machine table. */
export type ColumnOf<T extends MachineTable> = keyof Database[T] & string;

/** An extra condition of the guarded UPDATE: `[column, operator, value or SQL such as now()]`. */
export type CasGuard<T extends MachineTable> = readonly [ColumnOf<T>, '=' | '<' | '<=' | '>' | '>=', unknown];

export interface CompareAndSetInput<T extends MachineTable> {
  readonly table: T;
  /** The row, by equality on its key columns, in this order: `{ run_id, step_idx }`, `{ id }`. */
  readonly key: { readonly [C in ColumnOf<T>]?: string | number };
  /** The machine's transition table (`STEP_TRANSITIONS`, `APPROVAL_TRANSITIONS`, …). */
  readonly transitions: TransitionTable<StatusOf<T>>;
  readonly to: StatusOf<T>;
  /**
   * Narrows the table's sources further (the status the caller saw). A status the table does not list for
   * `to` is dropped, never added: asked only from illegal sources, the move is refused without an UPDATE.
   */
  readonly onlyFrom?: readonly StatusOf<T>[] | undefined;
  /** Other columns to set with the status (values, or SQL such as `now()`); never `status` itself. */
  readonly set?: Omit<UpdateObject<Database, T>, 'status'> | undefined;
  /** Extra conditions of the UPDATE (a lease owner, an expired lease, a version), after the status. */
  readonly guards?: readonly CasGuard<T>[] | undefined;
}

/** What a compare-and-set came to. `from`: the status the row was in (null: no such row). */
export type CompareAndSetResult<T extends MachineTable> =
  | { readonly moved: true; readonly row: Selectable<Database[T]>; readonly from: StatusOf<T> }
  | { readonly moved: false; readonly from: StatusOf<T> | null };

/** The statuses a move to `to` may leave: the table's list, narrowed by `onlyFrom` when given. */
export function legalSources<S extends string>(
  transitions: TransitionTable<S>,
  to: S,
  onlyFrom?: readonly S[],
): S[] {
  const legal = transitions[to];
  return onlyFrom ? legal.filter((s) => onlyFrom.includes(s)) : [...legal];
}

// Kysely cannot check a query over a table chosen by a type parameter. The input is checked against the
// concrete table above; the builder below runs on a view of the schema that knows only a `status` column.
type AnyMachineRow = { status: string } & Record<string, unknown>;
type MachineDb = Record<string, AnyMachineRow>;

/**
 * Moves one row of a state machine, in the caller's transaction: the one compare-and-set body that the
 * moves of steps, runs, compensations, approvals, cases and corrections are written with:
 *
 * ```sql
 * SELECT status FROM $table WHERE $key FOR UPDATE;
 * UPDATE $table SET …$set, status = $to
 *  WHERE $key AND status IN ($sources) [AND $guards…]
 * RETURNING *;
 * ```
 *
 * `$sources` is the transition table's list for `$to`, narrowed by the caller's `onlyFrom`. The read comes
 * first, under the row lock, so a refusal names the status the row is really in and a move knows the
 * status it left (for its event), and neither can change under the caller before it commits.
 *
 * A refusal writes nothing and leaves the row as it was: an illegal move (no legal source left) is refused
 * from the table alone, without an UPDATE; a missing row, a row in another status or a guard that does not
 * hold match zero rows. It is answered `{ moved: false, from }`, never thrown: each machine turns it into
 * its own typed error (`InvalidTransitionError`, `InvalidRunTransitionError`, …) and writes its own event.
 */
export async function compareAndSet<T extends MachineTable>(
  trx: SagaTrx,
  m: CompareAndSetInput<T>,
): Promise<CompareAndSetResult<T>> {
  const db = trx as unknown as Transaction<MachineDb>;
  const table: string = m.table;
  const key = Object.entries(m.key as Record<string, string | number>);
  // Without a key the UPDATE would match every row of the table in the source statuses.
  if (key.length === 0) throw new Error(`compareAndSet on ${m.table} needs the row's key`);
  const sources = legalSources<StatusOf<T>>(m.transitions, m.to, m.onlyFrom);
  let read = db.selectFrom(table).select('status');
  for (const [column, value] of key) read = read.where(column, '=', value);
  const prev = await read.forUpdate().executeTakeFirst();
  if (!prev) return { moved: false, from: null };
  const from = prev.status as StatusOf<T>;
  if (sources.length === 0) return { moved: false, from };
  let update = db.updateTable(table).set({ ...(m.set as Record<string, unknown>), status: m.to });
  for (const [column, value] of key) update = update.where(column, '=', value);
  update = update.where('status', 'in', sources);
  for (const [guarded, op, value] of m.guards ?? []) {
    const column: string = guarded;
    update = update.where(column, op, value);
  }
  const row = await update.returningAll().executeTakeFirst();
  if (!row) return { moved: false, from };
  return { moved: true, row: row as Selectable<Database[T]>, from };
}
