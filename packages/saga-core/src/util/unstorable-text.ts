/**
 * Text Postgres cannot store: `text` and `jsonb` refuse a NUL character (U+0000, `\u0000` in JSON) and a
 * UTF-16 surrogate without its pair (a lone `\ud800`, which JSON.parse accepts). A model can write either;
 * stored as they are, the insert fails after the request was accepted, as a 500. Found here first, so the
 * request is refused naming the field and nothing is written.
 */

/** Why a string cannot be stored, or null when it can. */
export function unstorableReason(s: string): string | null {
  if (s.includes('\u0000')) return 'contains a NUL character (U+0000), which cannot be stored';
  if (!isWellFormed(s)) return 'contains an unpaired UTF-16 surrogate, which cannot be stored';
  return null;
}

/**
 * The first string in `value` (an object key included) that cannot be stored, as a dotted path under
 * `root` (`args.note`, `args.items.2`), with the reason; null when everything can.
 *
 * Run on every request body (the API's `preValidation` hook): it walks without allocating, and builds the
 * path only for the string it finds.
 */
export function findUnstorableText(
  value: unknown,
  root: string,
): { readonly field: string; readonly reason: string } | null {
  const path: string[] = [];
  const reason = firstUnstorable(value, path);
  if (reason === null) return null;
  path.reverse();
  return { field: (root === '' ? path : [root, ...path]).join('.'), reason };
}

/** The reason of the first unstorable string in `value`; its keys pushed to `path`, innermost first. */
function firstUnstorable(value: unknown, path: string[]): string | null {
  if (typeof value === 'string') return unstorableReason(value);
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const reason = firstUnstorable(value[i], path);
      if (reason !== null) {
        path.push(String(i));
        return reason;
      }
    }
    return null;
  }
  const record = value as Record<string, unknown>;
  // Own enumerable string keys, in `Object.entries` order, without building the entries.
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const keyReason = unstorableReason(key);
    if (keyReason !== null) {
      path.push(key);
      return `its name ${keyReason}`;
    }
    const reason = firstUnstorable(record[key], path);
    if (reason !== null) {
      path.push(key);
      return reason;
    }
  }
  return null;
}

function isWellFormed(s: string): boolean {
  return (s as string & { isWellFormed(): boolean }).isWellFormed();
}
