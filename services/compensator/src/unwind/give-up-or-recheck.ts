import { dbNowPlus, readDeadline, type LookupTimings } from '@agent-saga/core';
import { backoffMs } from './backoff.js';
import { ended, giveUp, recheckLater, type Ended, type LookupEvents } from './compensation-pass.js';
import { unknownWaitMs, type UnwindDeps } from './unwind-deps.js';

/**
 * The one rule for a system the pass cannot read (a lookup or a precondition that errs): give up once the
 * tool's unknown wait has passed since `since`, by the database's clock; before that, look again after the
 * backoff of attempt `attemptNo`.
 */
export async function giveUpOrRecheck(
  d: UnwindDeps,
  o: {
    readonly since: Date;
    /** The tool whose outcome is unknown (its lag and commit horizon bound the wait). */
    readonly tool: LookupTimings;
    readonly attemptNo: number;
    readonly giveUpReason: string;
    readonly evidence: Record<string, unknown>;
    readonly recheckWhy: string;
    readonly lookups: LookupEvents;
  },
): Promise<Ended> {
  const deadline = await readDeadline(d.db, o.since, unknownWaitMs(d.config, o.tool));
  if (deadline.passed) return ended(giveUp(o.giveUpReason, o.evidence), o.lookups);
  return ended(recheckLater(dbNowPlus(backoffMs(d.config, o.attemptNo)), o.recheckWhy), o.lookups);
}
