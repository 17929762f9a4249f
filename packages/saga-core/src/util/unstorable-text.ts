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
 */
export function findUnstorableText(
  value: unknown,
  root: string,
): { readonly field: string; readonly reason: string } | null {
  if (typeof value === 'string') {
    const reason = unstorableReason(value);
    return reason === null ? null : { field: root, reason };
  }
  if (value === null || typeof value !== 'object') return null;
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value as Record<string, unknown>);
  for (const [key, v] of entries) {
    const field = root === '' ? key : `${root}.${key}`;
    const keyReason = Array.isArray(value) ? null : unstorableReason(key);
    if (keyReason !== null) return { field, reason: `its name ${keyReason}` };
    const found = findUnstorableText(v, field);
    if (found) return found;
  }
  return null;
}

/** `String.prototype.isWellFormed` (Node 20), typed here while the lib target is ES2023. */
function isWellFormed(s: string): boolean {
  return (s as string & { isWellFormed(): boolean }).isWellFormed();
}
