import { z } from 'zod';

/** Milliseconds in one unit of a retention age. */
const UNIT_MS = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
} as const;

/** `<whole number><unit>`, unit one of s, m, h, d, w: `30d`, `12h`, `90m`. */
const AGE = /^([1-9][0-9]*)(s|m|h|d|w)$/;

/**
 * Why an upper bound of ten years: past it `now() - age` leaves Postgres's timestamp range for no purpose,
 * and a typo (`3650000d`) should fail rather than silently prune nothing.
 */
const MAX_AGE_MS = 10 * 365 * 86_400_000;

/**
 * Reads a retention age (`30d`, `12h`, `90m`, `45s`, `2w`) into milliseconds, or throws naming what is
 * wrong. One reading for `agent-saga prune --older-than` and the reconciler's `SAGA_PRUNE_OLDER_THAN`, so
 * the same words mean the same age in both. No bare numbers: `30` could be seconds or days.
 */
export function parseRetentionAge(text: string): number {
  const m = AGE.exec(text.trim());
  if (!m)
    throw new RangeError(`"${text}" is not an age: a whole number and a unit (s, m, h, d, w), e.g. 30d`);
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  if (ms > MAX_AGE_MS) throw new RangeError(`"${text}" is longer than ten years`);
  return ms;
}

/** The zod form of {@link parseRetentionAge}, for configs: an age string in, milliseconds out. */
export const retentionAgeSchema = z.string().transform((text, ctx) => {
  try {
    return parseRetentionAge(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});
