import { sql, type RawBuilder } from 'kysely';

/**
 * `'A', 'B'` as SQL literals, not parameters: a partial index is used only when the planner can prove its
 * predicate from the query's text, and a bound parameter proves nothing. The values are status constants
 * from the status objects, never input.
 */
export const literals = (values: readonly string[]): RawBuilder<unknown> =>
  sql.join(
    values.map((v) => sql.lit(v)),
    sql`, `,
  );
