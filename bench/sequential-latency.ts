import { summarize, type LatencySummary } from './latency-summary.js';

export interface SequentialResult<T> {
  readonly latency: LatencySummary;
  /** What each measured operation resolved with, in order. */
  readonly values: readonly T[];
}

/**
 * Unloaded latency: `warmup` operations, then `count` measured ones, strictly one after another, so each
 * meets an idle system. Any failure stops the bench: an unloaded no-op call has no excuse to fail.
 */
export async function runSequential<T>(input: {
  readonly warmup: number;
  readonly count: number;
  readonly op: () => Promise<T>;
}): Promise<SequentialResult<T>> {
  for (let i = 0; i < input.warmup; i++) await input.op();
  const latencies: number[] = [];
  const values: T[] = [];
  for (let i = 0; i < input.count; i++) {
    const t0 = performance.now();
    values.push(await input.op());
    latencies.push(performance.now() - t0);
  }
  return { latency: summarize(latencies), values };
}
