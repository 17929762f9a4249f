/**
 * `'A', 'B'`: a list of values as SQL literals, for CHECK constraints, partial-index predicates and trigger
 * WHEN clauses, which DDL cannot bind as parameters. Only for lists a migration spells out itself: a
 * migration never imports live code (the status objects of `statuses.ts` change; what a committed migration
 * creates must not). Part of the migrations, so frozen like them: what it returns for a list never changes.
 */
export const sqlLiterals = (values: readonly string[]): string =>
  values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ');
