import pg from 'pg';

/** Postgres's OID of `timestamptz`. */
const TIMESTAMPTZ_OID = 1184;

/** pg's own parser of `timestamptz` text (postgres-date): every form the fast path does not take. */
const parseAnyTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => unknown;

const DIGIT_0 = 48;

/** The two decimal digits at `at`, or NaN when either is not a digit. */
function twoDigits(s: string, at: number): number {
  const a = s.charCodeAt(at) - DIGIT_0;
  const b = s.charCodeAt(at + 1) - DIGIT_0;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : NaN;
}

/**
 * A `timestamptz` as Postgres writes it in text with `DateStyle` ISO (the default, and what every saga
 * connection uses): `YYYY-MM-DD HH:MM:SS[.f…]±HH[:MM[:SS]]`, read by position into a `Date`, the same
 * instant pg's own parser gives (milliseconds, the fraction truncated). Anything else (a year before 1000 or
 * after 9999, BC, `infinity`, another `DateStyle`) goes to pg's parser.
 *
 * Why: a step row carries up to six timestamps and the hot statements return one or two rows per call;
 * pg's parser runs three regular expressions and a dozen substrings per value (measured in the bench's
 * api: about 4 % of every byte it allocates and 2–3 % of its main thread, docs/benchmarks.md).
 */
export function parseTimestamptz(text: string): unknown {
  const n = text.length;
  if (n < 22 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 32)
    return parseAnyTimestamptz(text);
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  if (text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58 || !(year >= 1000))
    return parseAnyTimestamptz(text);
  let i = 19;
  let ms = 0;
  if (text.charCodeAt(i) === 46) {
    // The fraction: its first three digits are the milliseconds (truncated), the rest is dropped.
    let scale = 100;
    for (i++; i < n; i++) {
      const d = text.charCodeAt(i) - DIGIT_0;
      if (d < 0 || d > 9) break;
      ms += d * scale;
      scale /= 10;
    }
    ms = Math.trunc(ms);
  }
  const sign = text.charCodeAt(i);
  if (sign !== 43 && sign !== 45) return parseAnyTimestamptz(text);
  let offsetS = twoDigits(text, i + 1) * 3600;
  i += 3;
  for (let unit = 60; i < n && unit >= 1; unit /= 60, i += 3) {
    if (text.charCodeAt(i) !== 58) return parseAnyTimestamptz(text);
    offsetS += twoDigits(text, i + 1) * unit;
  }
  if (i !== n) return parseAnyTimestamptz(text);
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const at = utc - (sign === 43 ? offsetS : -offsetS) * 1000;
  return Number.isNaN(at) ? parseAnyTimestamptz(text) : new Date(at);
}

/**
 * pg's type parsers with {@link parseTimestamptz} for `timestamptz` text: the `types` of every saga
 * connection (`pgConnectionConfig`). Every other type is parsed as pg parses it.
 */
export const SAGA_TYPE_PARSERS: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    oid === TIMESTAMPTZ_OID && (format ?? 'text') === 'text'
      ? parseTimestamptz
      : (pg.types.getTypeParser(oid, format) as unknown)) as pg.CustomTypesConfig['getTypeParser'],
};
