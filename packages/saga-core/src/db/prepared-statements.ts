import type pg from 'pg';
import { sql, type RawBuilder } from 'kysely';

/**
 * Prepared statements for the hot path. A statement opts in by carrying `preparedAs('name')` (a comment
 * `/* prepared:name *\/` in its text); every connection of the pool then sends it as the named statement
 * `name`: Postgres parses and plans it once per connection, and `pg` skips the Parse message afterwards.
 * Kysely has no way to name a statement, so the pool's clients are taught to recognise the marker.
 *
 * Statements whose text never varies should opt in (values in parameters, lists as arrays). The name sent
 * is the marker's name plus a hash of the text, so a text that does vary is a separate statement rather
 * than an error (`pg` refuses one name for two texts). Statements without parameters (multi-statement
 * texts) are never prepared.
 */
const MARKER = /\/\* prepared:([a-z][a-z0-9_]{0,62}) \*\//;

/** The marker that makes a statement a named prepared statement (see {@link installPreparedStatements}). */
export function preparedAs(name: string): RawBuilder<unknown> {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(name)) throw new RangeError(`invalid statement name ${name}`);
  return sql.raw(`/* prepared:${name} */`);
}

type QueryFn = (...args: unknown[]) => unknown;

/** Makes every client of `pool` send marked statements as named prepared statements. */
export function installPreparedStatements(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as QueryFn;
    const names = new Map<string, string | null>();
    (client as unknown as { query: QueryFn }).query = (
      text: unknown,
      values?: unknown,
      ...rest: unknown[]
    ) => {
      if (typeof text === 'string' && Array.isArray(values) && values.length > 0) {
        let name = names.get(text);
        if (name === undefined) {
          const m = MARKER.exec(text);
          name = m ? `${m[1]}_${fnv1a(text)}` : null;
          // Bounded: a text that keeps changing is not a hot statement; stop remembering new ones.
          if (names.size < MAX_TEXTS) names.set(text, name);
        }
        if (name) return query({ name, text, values }, ...rest);
      }
      return query(text, values, ...rest);
    };
  });
}

/** Distinct statement texts remembered per connection. */
const MAX_TEXTS = 500;

/** 32-bit FNV-1a of `s`, hex: tells two texts under one marker apart. */
function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16);
}
