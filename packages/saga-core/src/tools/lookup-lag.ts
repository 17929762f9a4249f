import type { SagaDb, SagaTrx } from '../db/connect.js';
import { readDeadline } from '../db/db-clock.js';
import type { AnsweredRateLimit } from './answered-rate-limit.js';
import type { AnyTool } from './define-tool.js';

/** The declarations of a tool that say when its lookup's "not found" may be believed. */
export type LookupTimings = Pick<AnyTool, 'commitHorizonMs' | 'timeoutMs' | 'lookupLagMs'>;

/** Whether a lookup's "not found" may be believed yet, and from when. */
export interface LookupLag {
  /**
   * The last attempt was sent more than the tool's commit horizon plus its `lookupLagMs` ago (by the
   * database's clock): the real system can no longer make the effect, and its search would show it.
   */
  readonly passed: boolean;
  /** When it will have (or had): the earliest moment a "not found" is evidence of absence. */
  readonly believableAt: Date;
}

/**
 * The tool's commit horizon: its declared `commitHorizonMs`, else its `timeoutMs` (the default, read here
 * so that a copy of a tool with a shorter timeout has a shorter default horizon too).
 */
export function commitHorizonOf(tool: Pick<AnyTool, 'commitHorizonMs' | 'timeoutMs'>): number {
  return tool.commitHorizonMs ?? tool.timeoutMs;
}

/**
 * How long after an attempt is sent a "not found" becomes evidence of absence: the commit horizon (the
 * real system may still make the effect until then, even after the client gave up) and then the lookup
 * lag (its search may not show an effect made at the horizon's last moment until this much later).
 *
 * Why the sum, not the larger of the two: a request held to the end of the horizon commits there, and its
 * effect reaches the search index up to `lookupLagMs` after that.
 *
 * With `answered` (the last attempt ended in a 429 the vendor answered, see `answered-rate-limit.ts`), the
 * horizon gives way to the moment of the answer: nothing is in flight after it, so only the lag, counted
 * from the answer, remains, and the vendor's `Retry-After` if it asked for longer (the verdict "absent" is
 * what lets the step be sent again, so it is not given before the vendor said it would serve a re-send).
 * The answer is not timed by the database, so it is bounded: it came within the tool's `timeoutMs` of the
 * send (the executor aborts the call then, and an abort is a timeout, not a 429), and never later than the
 * horizon. Hence `min(horizon, timeoutMs) + max(lookupLagMs, retryAfterMs)`, and never more than the wait
 * without the answer (`horizon + lookupLagMs`): knowing of the answer only ever shortens the wait, so a
 * `Retry-After` longer than the horizon is honoured as far as the horizon reaches, as before.
 */
export function absenceEvidenceAfterMs(tool: LookupTimings, answered?: AnsweredRateLimit): number {
  const horizon = commitHorizonOf(tool);
  const unanswered = horizon + tool.lookupLagMs;
  if (!answered) return unanswered;
  const fromAnswer = Math.min(horizon, tool.timeoutMs) + Math.max(tool.lookupLagMs, answered.retryAfterMs);
  return Math.min(unanswered, fromAnswer);
}

/**
 * Reads, by the database's clock, whether {@link absenceEvidenceAfterMs} has passed since `lastAttemptAt`
 * (`lastAttemptAt + horizon + lag < now()`, see {@link readDeadline}; with `answered`, the wait of an
 * answered 429). `lastAttemptAt` must be a timestamp
 * the database wrote (a row's `last_attempt_at`, its `send_started_at`, or its `updated_at` for a row never
 * attempted), never the process's clock. No row is read or written. The one home of "when may not found
 * be believed": every pool reaches it through `settleFromLookup`, or calls it directly.
 */
export async function readLookupLag(
  db: SagaDb | SagaTrx,
  lastAttemptAt: Date,
  tool: LookupTimings,
  answered?: AnsweredRateLimit,
): Promise<LookupLag> {
  const d = await readDeadline(db, lastAttemptAt, absenceEvidenceAfterMs(tool, answered));
  return { passed: d.passed, believableAt: d.at };
}

/** The HTTP status of a keyed vendor's "a request with this key is still in flight" answer. */
const KEY_IN_FLIGHT = 409;

/**
 * How long after an attempt a "not found" lets a step be sent again under its key, for a tool whose real
 * system dedupes by key (`dedupesByKey`): its `lookupLagMs` (and an answered 429's `Retry-After`, as for
 * absence), not the commit horizon. Undefined when the rule does not apply: the tool does not dedupe, or
 * a stored 409 says the vendor holds an earlier send under the key (sending again would only be told so:
 * wait for the horizon, or for the effect to show).
 */
export function resendAfterMs(
  tool: Pick<AnyTool, 'dedupesByKey' | 'lookupLagMs'>,
  lastError: unknown,
  answered?: AnsweredRateLimit,
): number | undefined {
  if (!tool.dedupesByKey) return undefined;
  if ((lastError as { status?: unknown } | null)?.status === KEY_IN_FLIGHT) return undefined;
  return Math.max(tool.lookupLagMs, answered?.retryAfterMs ?? 0);
}
