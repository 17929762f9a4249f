import { summarize, type LatencySummary } from './latency-summary.js';

/** Parameters of {@link runClosedLoop}. */
export interface ClosedLoopInput<T> {
  /** Operations in flight at every moment: each lane starts its next one when the last ends. */
  readonly concurrency: number;
  /** Load before the measured window; its operations are not counted. */
  readonly rampMs: number;
  readonly durationMs: number;
  /** One operation on `lane`; what it resolves with is collected for the measured window. */
  readonly op: (lane: number) => Promise<T>;
  /** Runs when the ramp ends, before the window opens (read the 'before' counters here). */
  readonly atWindowStart?: () => Promise<void>;
}

export interface ClosedLoopResult<T> {
  /** From the window's start to its end (no operation starts after the end). */
  readonly windowMs: number;
  /** Operations that ended inside the window, per second of it: the sustained rate. */
  readonly perSecond: number;
  /** Operations that ended after the window opened (in-window ones plus the drained tail). */
  readonly completedSinceWindowStart: number;
  /** Latency of every operation started inside the window, drained tail included. */
  readonly latency: LatencySummary;
  /** What the operations started inside the window resolved with. */
  readonly values: readonly T[];
  readonly errors: number;
  readonly firstError: string | undefined;
}

/**
 * A closed-loop load: `concurrency` lanes, each running `op` back to back, for a ramp and then a measured
 * window; when the window ends no lane starts another operation, and the ones in flight are awaited (so
 * counters read afterwards hold every write of every operation counted).
 */
export async function runClosedLoop<T>(input: ClosedLoopInput<T>): Promise<ClosedLoopResult<T>> {
  let windowStart = Infinity;
  let windowEnd = Infinity;
  let stop = false;
  let inWindow = 0;
  let sinceStart = 0;
  let errors = 0;
  let firstError: string | undefined;
  const latencies: number[] = [];
  const values: T[] = [];

  async function lane(i: number): Promise<void> {
    while (!stop) {
      const t0 = performance.now();
      try {
        const v = await input.op(i);
        const t1 = performance.now();
        if (t1 >= windowStart) sinceStart++;
        if (t1 >= windowStart && t1 <= windowEnd) inWindow++;
        if (t0 >= windowStart) {
          latencies.push(t1 - t0);
          values.push(v);
        }
      } catch (err) {
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
        // A broken system fails fast; do not spin on it.
        if (errors > 100 && errors > latencies.length) stop = true;
      }
    }
  }

  const lanes = Array.from({ length: input.concurrency }, (_, i) => lane(i));
  await sleep(input.rampMs);
  await input.atWindowStart?.();
  windowStart = performance.now();
  await sleep(input.durationMs);
  windowEnd = performance.now();
  stop = true;
  await Promise.all(lanes);
  const windowMs = windowEnd - windowStart;
  return {
    windowMs,
    perSecond: inWindow / (windowMs / 1000),
    completedSinceWindowStart: sinceStart,
    latency: summarize(latencies),
    values,
    errors,
    firstError,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
