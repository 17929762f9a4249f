import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { SagaDb } from '../db/connect.js';
import type { ClientError } from '../errors/errors.js';
import { answeredRateLimitOf, type LastAttemptOutcome } from './answered-rate-limit.js';
import { answeredUnderKey } from './answered-under-key.js';
import { readLookupLag, resendAfterMs, type LookupLag } from './lookup-lag.js';
import { readDeadline } from '../db/db-clock.js';
import type { AnyTool, ToolEffect } from './define-tool.js';
import { lookupByKey, type LookupObservation, type LookupTarget } from './lookup-by-key.js';

/**
 * What the lookups of an unknown outcome prove, by the one rule every pool follows ("believe not-found
 * only once the tool's commit horizon and then its `lookupLagMs` have passed since the last attempt was
 * sent, by the database's clock, and a re-check agrees"). Each caller decides what to write for each kind;
 * none re-derives the rule.
 *
 * Why the horizon: a vendor may hold a request past the client's timeout and commit it afterwards. Were
 * "not found" believed once only the lag had passed since the send, a lookup made between the timeout and
 * that late commit would prove absence, and the re-send would make the effect twice wherever the vendor
 * does not dedupe by key (a Jira ticket; seen by `pnpm simulate`, docs/simulation.md). The one exception is
 * a last attempt the vendor answered with 429 (`answered-rate-limit.ts`): nothing is in flight after that
 * answer, so waiting out the horizon would only keep a step that never happened unknown (an agent gave up
 * on a Jira create after a 429 while its "not found" waited 14 s; `pnpm simulate`, seed 11).
 *
 * - `found`: the real system holds the effect made under the key (believed at once, lag or not).
 *   `duplicates`: the references of the other effects under the same key (empty unless an incident).
 * - `absent`: two lookups, `recheckMs` apart and both made after the horizon and the lag had passed since
 *   the last attempt, found nothing: the call never took effect, and no longer can.
 * - `refused`: the real system holds the call made under the key, ended without its effect for good
 *   (`RefusedUnderKey`: refused, or done in part and never to be completed under the key), seen once the
 *   horizon and the lag had passed, or at once when the last attempt was answered 500 by a vendor that
 *   dedupes by key (`answeredUnderKey`: nothing under the key is in flight): the step is FAILED with
 *   `error`, as the executor would have written had the answer come back. Otherwise it is `too-early`: a
 *   request the vendor still holds may yet complete (no re-check: the vendor's record was read, not
 *   missed by a search).
 * - `resendable`: no effect found past the tool's lookup lag, not yet past its horizon, on a tool whose
 *   real system dedupes by key (`dedupesByKey`, `resendAfterMs`): sending the step again under its key is
 *   safe — the vendor makes the effect at most once, whatever became of the first send — but nothing is
 *   proved absent. Only a run going forward acts on it (the reconciler and the API's inline lookup send the
 *   step again); whatever would conclude "nothing happened" (an unwind, a stopped run) treats it as
 *   `too-early`. Why: a send that never left (its executor killed before the request, a dropped
 *   connection) is sent again after the lag, not after the horizon, and an agent is not left waiting 15 s
 *   for a charge that is made in one (`pnpm simulate`, docs/simulation.md). A refusal found under the key
 *   whose last send nobody saw end (the executor killed while the vendor worked: no answer stored, so not
 *   `answeredUnderKey`) is `resendable` too: the re-send is told the vendor's saved answer (a 500, or the
 *   409 of a send still in flight), and that answer settles the step at once or keeps the horizon.
 * - `too-early`: nothing found, but the real system may still make the effect, or its search may not show
 *   it yet: look again at `believableAt` (a database timestamp: the last attempt plus the horizon plus the
 *   lag). Not a failure.
 * - `lookup-error`: the last lookup failed or timed out; nothing was learnt.
 */
export type LookupVerdict =
  | {
      readonly kind: 'found';
      readonly effect: ToolEffect;
      readonly duplicates: readonly string[];
    }
  | { readonly kind: 'absent' }
  | { readonly kind: 'resendable'; readonly believableAt: Date }
  | { readonly kind: 'refused'; readonly error: ClientError }
  | { readonly kind: 'too-early'; readonly believableAt: Date }
  | { readonly kind: 'lookup-error'; readonly error: { readonly name: string; readonly message: string } };

/**
 * The rule itself, pure: decides from the observations of one pass, in the order they were made (one
 * lookup, or a first "not found" and its re-check), and `lag` ({@link readLookupLag}: horizon plus lag),
 * read by the database's clock before them. "Not found" is `absent` only when that moment had passed and
 * every lookup of the pass (at least two) agrees; before it, `resendable` when `resendPassed` (the tool's
 * {@link resendAfterMs} had passed by the same clock), else `too-early`. A refusal found under the key is
 * `refused` past that moment, or at once when `keyWorkEnded` (`answeredUnderKey`: the last attempt was
 * answered 500 by a vendor that dedupes by key, so nothing under the key is in flight); before it,
 * `resendable` when `resendPassed`, as a "not found" is, else `too-early`.
 */
export function decideLookupVerdict(
  observations: readonly LookupObservation[],
  lag: LookupLag | undefined,
  resendPassed = false,
  keyWorkEnded = false,
): LookupVerdict {
  const last = observations.at(-1);
  if (!last) throw new RangeError('a verdict needs at least one lookup');
  switch (last.kind) {
    case 'found':
      return { kind: 'found', effect: last.effect, duplicates: last.effect.duplicates ?? [] };
    case 'error':
      return { kind: 'lookup-error', error: last.error };
    case 'refused':
      if (!lag) throw new RangeError('a refusal is judged against the commit horizon: read it first');
      if (lag.passed || keyWorkEnded) return { kind: 'refused', error: last.error };
      // Nobody saw how the last send under the key ended (a lapsed lease, a reset): the vendor's own
      // answer, which it replays to a re-send under the key, settles it sooner than the horizon.
      if (resendPassed) return { kind: 'resendable', believableAt: lag.believableAt };
      return { kind: 'too-early', believableAt: lag.believableAt };
    case 'absent': {
      if (!lag) throw new RangeError('a "not found" is judged against the lookup lag: read it first');
      const rechecked = observations.length >= 2 && observations.every((o) => o.kind === 'absent');
      if (lag.passed && rechecked) return { kind: 'absent' };
      if (!lag.passed && resendPassed) return { kind: 'resendable', believableAt: lag.believableAt };
      return { kind: 'too-early', believableAt: lag.believableAt };
    }
    default: {
      const never: never = last;
      throw new Error(`unhandled observation ${JSON.stringify(never)}`);
    }
  }
}

/** Parameters of {@link settleFromLookup}. */
export interface SettleFromLookupInput {
  /** Read for its clock only (`SELECT now()`); a pool, never a transaction: the lookups call the vendor. */
  readonly db: SagaDb;
  /** The tool whose `lookup`, commit horizon (`commitHorizonMs`, else `timeoutMs`) and `lookupLagMs` decide. */
  readonly tool: AnyTool;
  /** The key looked up, its stored arguments, and the run, step and tenant the lookup's context names. */
  readonly target: LookupTarget;
  /**
   * When the last attempt that may have reached the real system was sent, as the database recorded it
   * (`last_attempt_at`, or `updated_at` for a row never attempted). Never a process clock.
   */
  readonly lastAttemptAt: Date;
  /**
   * The step's attempt count and stored error (`saga_log.attempts`, `saga_log.error`), when the caller
   * read them with the row: if they say the last attempt ended in a 429 the vendor answered, no request is
   * in flight and the horizon gives way to that answer (`answered-rate-limit.ts`, `absenceEvidenceAfterMs`).
   * Omitted: the horizon applies, as for any attempt whose end nobody saw.
   */
  readonly lastOutcome?: LastAttemptOutcome;
  /** Pause before a first "not found" is looked up again (LOOKUP_RECHECK_MS). */
  readonly recheckMs: number;
  readonly log: Logger;
}

/**
 * What {@link settleFromLookup} decided, with the evidence: every lookup it made, in order, and when "not
 * found" became (or becomes) believable.
 */
export interface LookupSettlement {
  readonly verdict: LookupVerdict;
  readonly observations: readonly LookupObservation[];
  readonly lag: LookupLag;
}

/**
 * Settles an unknown outcome from the real system, by the one rule (see {@link LookupVerdict}):
 *
 * 1. reads, by the database's clock, whether the tool's commit horizon plus its `lookupLagMs` has passed
 *    since `lastAttemptAt` ({@link readLookupLag}: `lastAttemptAt + horizon + lag < now()`; for a last
 *    attempt answered 429, per `lastOutcome`, the answer's bound instead of the horizon), before any
 *    lookup, so that every lookup the verdict rests on was made after that moment;
 * 2. `lookup(key)` through {@link lookupByKey} (bounded by the tool's `timeoutMs`, never throws);
 * 3. on "not found" with that moment passed, sleeps `recheckMs` and looks up once more.
 *
 * Never throws for the real system's sake (a failed lookup is `lookup-error`); a database error reading the
 * clock does throw. Writes nothing: the caller writes what the verdict means for its row (a step, a
 * compensation, a correction send), by compare-and-set on the state it read.
 *
 * Signature (stable): `settleFromLookup({ db, tool, target, lastAttemptAt, lastOutcome?, recheckMs, log }):
 * Promise<{ verdict: LookupVerdict; observations: LookupObservation[]; lag: LookupLag }>`.
 */
export async function settleFromLookup(i: SettleFromLookupInput): Promise<LookupSettlement> {
  const answered = answeredRateLimitOf(i.lastOutcome);
  const lag = await readLookupLag(i.db, i.lastAttemptAt, i.tool, answered);
  const resendMs = lag.passed ? undefined : resendAfterMs(i.tool, i.lastOutcome?.error, answered);
  // Read before the lookup, as the lag is: every lookup the verdict rests on was made after it.
  const resendPassed = resendMs !== undefined && (await readDeadline(i.db, i.lastAttemptAt, resendMs)).passed;
  const observations = [await lookupByKey(i.tool, i.target, i.log)];
  if (observations[0]!.kind === 'absent' && lag.passed) {
    await sleep(i.recheckMs);
    observations.push(await lookupByKey(i.tool, i.target, i.log));
  }
  const keyWorkEnded = answeredUnderKey(i.tool, i.lastOutcome);
  return { verdict: decideLookupVerdict(observations, lag, resendPassed, keyWorkEnded), observations, lag };
}
