/**
 * Labelled values, one per line, the values aligned: the text form of one item (`runs show`, `approvals
 * show`), where a table of one row would be too wide to read. A value of several lines (pretty JSON
 * arguments) keeps its lines, each indented under the first, so nothing is cut.
 */
export type Field = readonly [label: string, value: string | number | boolean | null | undefined];

/** Two spaces between the longest label and the values, as in tables. */
const GAP = '  ';

export function formatFields(fields: readonly Field[], indent = ''): string {
  const width = Math.max(0, ...fields.map(([label]) => label.length));
  return fields
    .map(([label, value]) => {
      const [first = '', ...rest] = valueText(value).split('\n');
      const pad = `${indent}${' '.repeat(width)}${GAP}`;
      return [
        `${indent}${label.padEnd(width)}${GAP}${first}`.trimEnd(),
        ...rest.map((l) => `${pad}${l}`),
      ].join('\n');
    })
    .map((line) => `${line}\n`)
    .join('');
}

function valueText(v: string | number | boolean | null | undefined): string {
  return v === null || v === undefined || v === '' ? '-' : String(v);
}

/** JSON on one line, for table cells and short values. */
export function compactJson(value: unknown): string {
  return value === undefined ? '-' : JSON.stringify(value);
}

/** JSON over several lines, for values a person must read whole (arguments that will execute). */
export function prettyJson(value: unknown): string {
  return value === undefined ? '-' : JSON.stringify(value, null, 2);
}

/**
 * An ISO time with how far it is from `now`: `2026-01-01T10:00:00.000Z (in 2h 5m)`, or `(3m ago)`. For
 * deadlines, where the distance is what a person acts on.
 */
export function timeWithDistance(iso: string, now = Date.now()): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const ms = at - now;
  return `${iso} (${ms >= 0 ? `in ${duration(ms)}` : `${duration(-ms)} ago`})`;
}

function duration(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const mins = minutes % 60;
  if (days > 0) return `${days}d ${hours}h`;
  if (hours > 0) return `${hours}h ${mins}m`;
  return minutes > 0 ? `${mins}m` : `${Math.floor(ms / 1000)}s`;
}

/** The first 12 characters of a hash, for overviews; decisions always take the whole hash. */
export function shortHash(hash: string): string {
  return hash.length > 12 ? `${hash.slice(0, 12)}…` : hash;
}
