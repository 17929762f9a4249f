import { sql, type RawBuilder } from 'kysely';
import type { SagaDb, SagaTrx } from './connect.js';

/*
 * Every lease and deadline is read and written on the database's clock, never a process's: pools run on
 * many machines whose clocks drift apart, and one of them writing a lease by its clock while another checks
 * it by the database's lets a live attempt look expired (sent twice) or a dead one look live (stuck).
 * Timings that decide nothing (metrics, log lines, a process's own sleep or poll budget) may use the
 * process clock.
 */

/**
 * `now() + ms` on the database's clock, as SQL to write into a lease or deadline column (or compare with
 * one). `ms` is a bound parameter, so the statement's text, and any prepared plan, stays the same.
 */
export function dbNowPlus(ms: number): RawBuilder<Date> {
  return sql<Date>`now() + make_interval(secs => ${ms / 1000}::float8)`;
}

/**
 * Reads the database's clock (`SELECT now()`; inside a transaction, the transaction's start), for a deadline
 * that must also be shown or stored as a value (an approval's `expires_at` in its evidence). Add durations
 * to it; never mix it with `Date.now()`.
 */
export async function readDbNow(db: SagaDb | SagaTrx): Promise<Date> {
  const r = await sql<{ now: Date }>`SELECT now() AS now`.execute(db);
  return r.rows[0]!.now;
}

/** Whether a moment `ms` after a database timestamp has passed, by the database's clock, and when it is. */
export interface DbDeadline {
  readonly passed: boolean;
  readonly at: Date;
}

/**
 * Reads whether `from + ms < now()` on the database's clock, and `from + ms` itself:
 *
 * ```sql
 * SELECT $from + make_interval(secs => $ms / 1000.0) < now() AS passed, … AS at;
 * ```
 *
 * `from` must be a timestamp the database wrote (a row's `last_attempt_at`, `updated_at`, `lease_until`),
 * never the process's clock: both sides of the comparison are then the database's. (A `Date` carries
 * milliseconds, Postgres microseconds: the sub-millisecond rounding is the only imprecision, far below any
 * lease or lag.) No row is read or written.
 */
export async function readDeadline(db: SagaDb | SagaTrx, from: Date, ms: number): Promise<DbDeadline> {
  const r = await sql<{ passed: boolean; at: Date }>`
    SELECT t.at < now() AS passed, t.at
      FROM (SELECT ${from}::timestamptz + make_interval(secs => ${ms / 1000}::float8) AS at) t`.execute(db);
  const row = r.rows[0]!;
  return { passed: row.passed, at: row.at };
}
