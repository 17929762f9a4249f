/** Latency samples in milliseconds, summarised the same way for every phase and every system. */
export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/**
 * Nearest-rank percentiles (the smallest sample with at least q of the samples at or below it): no
 * interpolation, so every figure is a latency that was really observed. An empty set summarises to NaN.
 */
export function summarize(samplesMs: readonly number[]): LatencySummary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  const sum = sorted.reduce((s, x) => s + x, 0);
  return {
    count: sorted.length,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: sorted.length === 0 ? NaN : sorted[sorted.length - 1]!,
    mean: sorted.length === 0 ? NaN : sum / sorted.length,
  };
}
