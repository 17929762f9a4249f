import { sql } from 'kysely';

/**
 * `'A', 'B'`: a list of status values as SQL literals, for CHECK constraints and partial-index predicates
 * that DDL cannot bind as parameters. The values come from the status objects in `statuses.ts`, their one
 * definition, never from input.
 */
export const sqlLiterals = (values: readonly string[]): string =>
  values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ');

/** `CHECK (col IN (...))` derived from a status object. */
export const checkIn = (col: string, values: readonly string[]) =>
  sql.raw(`CHECK (${col} IN (${sqlLiterals(values)}))`);
