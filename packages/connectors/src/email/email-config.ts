import { parseConfig } from '@agent-saga/core';
import { z } from 'zod';

/**
 * Why 24 h: Resend keeps an idempotency key for 24 hours, so within that window a same-key re-send replays
 * instead of sending twice; past it, neither the key nor the lookup protects, and the step needs a human.
 */
export const DEFAULT_EMAIL_LOOKUP_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Why 200: each candidate costs one `GET /emails/{id}`, and Resend's default rate limit is a few per second. */
export const DEFAULT_EMAIL_LOOKUP_MAX_READS = 200;
/**
 * Why 5 s: Resend does not document how soon a sent email shows in `GET /emails`; a few seconds covers the
 * queueing we have seen. The sandbox lists at once.
 */
export const DEFAULT_EMAIL_LOOKUP_LAG_MS = 5_000;
/**
 * Why 5 minutes: the lookup skips emails created before the step was recorded, less this margin for the
 * difference between the database's clock (which stamps the step) and Resend's (which stamps the email).
 * Servers kept by NTP differ by milliseconds; five minutes also covers a host whose clock has drifted, and
 * still bounds a lookup to the emails of minutes, not of the whole day of the window.
 */
export const DEFAULT_EMAIL_LOOKUP_CLOCK_SKEW_MS = 5 * 60 * 1000;

const emailEnvSchema = z.object({
  /** Resend-compatible API base; default the real Resend API. */
  EMAIL_API_BASE: z.url().default('https://api.resend.com'),
  EMAIL_API_KEY: z.string().min(1),
  /** The sender, `hello@acme.com` or `Acme <hello@acme.com>`. */
  EMAIL_FROM: z.string().min(3).regex(/@/, 'an email address'),
  EMAIL_LOOKUP_WINDOW_MS: z.coerce.number().int().positive().default(DEFAULT_EMAIL_LOOKUP_WINDOW_MS),
  EMAIL_LOOKUP_MAX_READS: z.coerce.number().int().positive().default(DEFAULT_EMAIL_LOOKUP_MAX_READS),
  EMAIL_LOOKUP_LAG_MS: z.coerce.number().int().min(0).default(DEFAULT_EMAIL_LOOKUP_LAG_MS),
  EMAIL_LOOKUP_CLOCK_SKEW_MS: z.coerce.number().int().min(0).default(DEFAULT_EMAIL_LOOKUP_CLOCK_SKEW_MS),
  /** Drafts live in the harness's own Postgres, in the saga schema (table `email_drafts`, migration 0002). */
  DATABASE_URL: z.url(),
  SAGA_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/)
    .default('saga'),
});

/** The email connector's settings, parsed once. `apiKey` is a secret: never log this object. */
export interface EmailConfig {
  readonly apiBase: string;
  readonly apiKey: string;
  readonly from: string;
  /** Only emails created this recently are searched by `send_email`'s lookup. */
  readonly lookupWindowMs: number;
  /** At most this many emails are read one by one in a lookup; more candidates → unknown, not "absent". */
  readonly lookupMaxReads: number;
  readonly lookupLagMs: number;
  /**
   * A lookup reads no email created before its step was recorded less this much (the clocks' possible
   * difference); see {@link DEFAULT_EMAIL_LOOKUP_CLOCK_SKEW_MS}.
   */
  readonly lookupClockSkewMs: number;
  /** For `createDb` from `@agent-saga/core`. */
  readonly db: { readonly url: string; readonly schema: string };
}

/** Parses the email variables from `env`; a missing or bad one fails naming it (`ConfigError`). */
export function emailConfigFromEnv(env: Record<string, string | undefined>): EmailConfig {
  const e = parseConfig(emailEnvSchema, env);
  return Object.freeze({
    apiBase: e.EMAIL_API_BASE.replace(/\/+$/, ''),
    apiKey: e.EMAIL_API_KEY,
    from: e.EMAIL_FROM,
    lookupWindowMs: e.EMAIL_LOOKUP_WINDOW_MS,
    lookupMaxReads: e.EMAIL_LOOKUP_MAX_READS,
    lookupLagMs: e.EMAIL_LOOKUP_LAG_MS,
    lookupClockSkewMs: e.EMAIL_LOOKUP_CLOCK_SKEW_MS,
    db: Object.freeze({ url: e.DATABASE_URL, schema: e.SAGA_DB_SCHEMA }),
  });
}
