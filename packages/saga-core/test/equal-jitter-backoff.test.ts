import { describe, expect, it } from 'vitest';
import { equalJitterBackoffMs } from '@agent-saga/core';

describe('equalJitterBackoffMs (the backoff of the reconciler and the compensator)', () => {
  it('doubles from the base, caps at the max, and keeps at least half of each wait', () => {
    const shortest = [1, 2, 3, 4].map((n) => equalJitterBackoffMs(n, 1_000, 5_000, () => 0));
    const longest = [1, 2, 3, 4].map((n) => equalJitterBackoffMs(n, 1_000, 5_000, () => 1));
    expect(shortest).toEqual([500, 1_000, 2_000, 2_500]);
    expect(longest).toEqual([1_000, 2_000, 4_000, 5_000]);
  });

  it('spreads retries that failed together over the random half', () => {
    const waits = Array.from({ length: 200 }, () => equalJitterBackoffMs(3, 1_000, 60_000));
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(2_000);
    expect(Math.max(...waits)).toBeLessThanOrEqual(4_000);
    expect(new Set(waits).size).toBeGreaterThan(50);
  });

  it('treats a first attempt (n ≤ 1) as the base', () => {
    expect(equalJitterBackoffMs(0, 1_000, 5_000, () => 1)).toBe(1_000);
  });
});
