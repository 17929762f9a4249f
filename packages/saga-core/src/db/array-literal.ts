/** An element of a one-dimensional array parameter: a string, number or boolean, or null (SQL NULL). */
export type ArrayElement = string | number | boolean | null | undefined;

/**
 * `values` as the text of a one-dimensional Postgres array (`{"a","b\"c",NULL,3,t}`), for a parameter the
 * statement casts (`$1::text[]`, `::jsonb[]`, `::int[]`, `::bool[]`): what `pg` sends for a JavaScript array,
 * built in one pass. Strings are quoted with `\` and `"` escaped; numbers and booleans go bare; null and
 * undefined are NULL.
 *
 * Why not `pg`'s own conversion: the grouped statements send about twenty arrays per statement, many of
 * them JSON texts full of quotes, and `pg` builds each literal by appending to a string element by element,
 * escaping each with two regular-expression passes. Measured in the bench's api (sampling heap profile):
 * about an eighth of every byte it allocated per call (docs/benchmarks.md).
 */
export function arrayLiteral(values: readonly ArrayElement[]): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) parts[i] = 'NULL';
    else if (typeof v === 'string')
      // `JSON.stringify` of a string is exactly this quoting (a `"` and a `\` escaped with a backslash)
      // unless it holds a control character or a surrogate, which JSON writes as an escape sequence that
      // Postgres would not read back: those take the regular-expression pass. JSON.stringify is V8's own
      // fast path, 2–3 times quicker than the pass over the JSON texts the grouped statements mostly send.
      parts[i] = JSON_ESCAPES_DIFFER.test(v) ? `"${v.replace(NEEDS_ESCAPE, '\\$&')}"` : JSON.stringify(v);
    else if (typeof v === 'boolean') parts[i] = v ? 't' : 'f';
    else if (Number.isFinite(v)) parts[i] = String(v);
    else throw new RangeError(`array element ${i} is not a finite number: ${String(v)}`);
  }
  return `{${parts.join(',')}}`;
}

/** What a quoted element must escape with a backslash. */
const NEEDS_ESCAPE = /[\\"]/g;
/** What `JSON.stringify` writes as an escape sequence besides `"` and `\`: control characters, surrogates. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const JSON_ESCAPES_DIFFER = /[\u0000-\u001f\ud800-\udfff]/;
