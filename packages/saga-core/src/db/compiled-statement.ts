import { CompiledQuery, type QueryResult, type RawBuilder } from 'kysely';
import type { SagaDb } from './connect.js';

/** Where a parameter of the template is filled from on each execution. */
class Slot {
  constructor(readonly name: string) {}
}

/** A statement whose text is compiled once; see {@link compiledStatement}. */
export interface CompiledStatement<P, R> {
  execute(db: SagaDb, params: Readonly<P>): Promise<QueryResult<R>>;
}

/**
 * A hot statement written as a kysely `sql` template whose every varying value is a named parameter
 * (`${p.runIds}`, given on each execution), compiled to its text once, on its first execution: kysely
 * otherwise compiles a template on every execution (it walks each fragment and parameter and builds the
 * text anew), and a freshly built text must also be hashed whole again where it is looked up as a prepared
 * statement (`prepared-statements.ts`). Values written into the template itself (a status, a channel's
 * constant) are constants of the statement.
 *
 * `names` lists the parameters; each must appear in the template (checked at the first compile).
 * Measured on the API's grouped intake and outcome: docs/benchmarks.md.
 */
export function compiledStatement<P extends Record<string, unknown>, R>(
  names: readonly (keyof P & string)[],
  build: (p: Readonly<P>) => RawBuilder<R>,
): CompiledStatement<P, R> {
  let compiled: { readonly text: string; readonly fill: (params: Readonly<P>) => unknown[] } | undefined;
  const compile = (db: SagaDb): NonNullable<typeof compiled> => {
    const slots = Object.fromEntries(names.map((n) => [n, new Slot(n)])) as unknown as P;
    const { sql: text, parameters } = build(slots).compile(db);
    const unused = names.filter((n) => !parameters.some((p) => p instanceof Slot && p.name === n));
    if (unused.length > 0) throw new Error(`compiledStatement: ${unused.join(', ')} not in the template`);
    return { text, fill: (values) => parameters.map((p) => (p instanceof Slot ? values[p.name] : p)) };
  };
  return {
    execute(db, params) {
      compiled ??= compile(db);
      return db.executeQuery<R>(CompiledQuery.raw(compiled.text, compiled.fill(params)));
    },
  };
}
