import type { StepRow } from '../db/schema.js';

/**
 * The one case in which the lookup rule may drop a tool's commit horizon: the step's last attempt ended in
 * a 429 that the vendor (or its gateway) *answered*. Why this case, and only it:
 *
 * - The horizon exists for a request still in flight after the client gave up: the vendor may commit it
 *   later (`commitHorizonMs` in `define-tool.ts`). A request that was answered is not in flight, and a 429
 *   says it was turned away, not queued: Atlassian documents that a request re-sent before `Retry-After`
 *   "will fail and return the same or longer Retry-After period" (developer.atlassian.com/cloud/jira/
 *   platform/rate-limiting, quoted in JRACLOUD-69262); Stripe's limiters answer 429 to requests they do not
 *   serve (docs.stripe.com/rate-limits); Resend answers 429 "rate limit exceeded" and tells how long to wait
 *   in `retry-after` (resend.com/docs/api-reference/rate-limit). A gateway that rate-limits answers instead
 *   of forwarding. So no late commit can follow it.
 * - Not a 5xx, a 504 or a 409 "in flight": there a gateway may have answered while its backend still works,
 *   or the vendor says it is still working. Those keep the horizon.
 * - Not a timeout, a reset or a lease that lapsed: nothing answered.
 *
 * The stored error must say so of the *last* attempt: `attempt` equal to the row's `attempts`. The row's
 * `error` outlives a re-dispatch (NOT_EXECUTED → INTENDED keeps it) and a lapsed lease moved to UNKNOWN by
 * a lookup may keep it too; an old 429 must never excuse a newer attempt that may still be in flight. A
 * connector stamps `attempt` from `ToolContext.attempt` only on an error that carries the vendor's answer
 * (`HttpOutcomeUnknownError` in `@agent-saga/connectors`); no stamp, no shortcut.
 */
export interface AnsweredRateLimit {
  /** The vendor's `Retry-After`, in milliseconds, when it sent one (0 when it did not). */
  readonly retryAfterMs: number;
}

/** The HTTP status of an answered rate limit. */
const RATE_LIMITED = 429;

/** The fields of a step the rule reads to decide it: how many attempts, and the last one's stored error. */
export type LastAttemptOutcome = Pick<StepRow, 'attempts' | 'error'>;

/**
 * The answered 429 of the step's last attempt, or undefined (the rule then keeps the horizon). Reads the
 * stored error (`saga_log.error`, written by `classifyToolError`): `{ status: 429, attempt, retryAfterMs? }`
 * with `attempt === attempts`.
 */
export function answeredRateLimitOf(step: LastAttemptOutcome | undefined): AnsweredRateLimit | undefined {
  if (!step || step.error === null || typeof step.error !== 'object') return undefined;
  const { status, attempt, retryAfterMs } = step.error;
  if (status !== RATE_LIMITED) return undefined;
  if (typeof attempt !== 'number' || attempt !== step.attempts) return undefined;
  const wait = typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) ? retryAfterMs : 0;
  return { retryAfterMs: Math.max(0, Math.round(wait)) };
}
