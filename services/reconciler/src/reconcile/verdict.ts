/*
 * What the lookups of a reconcile pass prove (found, absent, too-early, lookup-error) is decided by core's
 * one lookup rule (`settleFromLookup` / `LookupVerdict` in @agent-saga/core), shared with the API's inline
 * lookup and the compensator; what the reconciler writes for each verdict is `settleReconcile`'s.
 */

/**
 * Backoff after the `n`-th failed lookup of a step (n ≥ 1): `base · 2^(n-1)`, capped at `max`, with "equal
 * jitter" (half fixed, half random), so reconcilers that failed together against one vendor do not retry
 * together, yet every wait is at least half its nominal length.
 */
export function backoffMs(n: number, base: number, max: number, random: () => number = Math.random): number {
  const nominal = Math.min(max, base * 2 ** Math.max(0, n - 1));
  return Math.round(nominal / 2 + random() * (nominal / 2));
}
