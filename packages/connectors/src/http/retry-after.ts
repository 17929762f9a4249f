/**
 * Why a cap of one hour: a sanity bound on a header (a misconfigured gateway's "Retry-After: 99999999");
 * the lookup rule never waits longer than the tool's commit horizon anyway (core's `absenceEvidenceAfterMs`).
 */
const MAX_RETRY_AFTER_MS = 3_600_000;

/** RFC 9110 §5.6.7's preferred HTTP-date form. */
const IMF_FIXDATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * Reads an HTTP `Retry-After` header (RFC 9110 §10.2.3): delay-seconds (`"1"`, `"120"`) or an HTTP-date
 * (IMF-fixdate), in milliseconds from now, capped at {@link MAX_RETRY_AFTER_MS}. Undefined when it is absent or
 * not one of those forms (then nothing is honoured beyond the lookup lag). An HTTP-date is read against
 * this process's clock: the header is the vendor's, there is no database time to compare it with, and a
 * skew only shifts a wait that was a courtesy to begin with.
 *
 * Atlassian: "Retry-After indicates how many seconds the app must wait before reissuing the request"
 * (developer.atlassian.com/cloud/jira/platform/rate-limiting); Resend: "How many seconds you should wait
 * before making a follow-up request" (resend.com/docs/api-reference/rate-limit).
 */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
  // Only the IMF-fixdate senders must use (`Wed, 02 Dec 2026 05:00:30 GMT`): `Date.parse` alone would take
  // "1.5" or "-5" for dates.
  if (!IMF_FIXDATE.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}
