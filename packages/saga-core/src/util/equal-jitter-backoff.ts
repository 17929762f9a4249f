/**
 * The wait before retry `n` (n ≥ 1) of something that failed against a dependency (a vendor's lookup, a
 * refused compensation): `baseMs · 2^(n-1)`, capped at `maxMs`, with "equal jitter": half of it fixed, half
 * random. The one backoff of the harness: the reconciler's failed lookups and the compensator's refused or
 * unknown compensations both wait by it (each with its own base and cap from its config).
 *
 * Why equal jitter (not full jitter, not none): the many steps that one vendor outage failed together must
 * not come back together (the random half spreads them), yet every wait stays at least half its nominal
 * length, so a step never retries at once against a vendor that is still down (full jitter may draw 0).
 *
 * `random` is `Math.random` but for tests (0 gives the shortest wait, 1 the longest).
 */
export function equalJitterBackoffMs(
  n: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const nominal = Math.min(maxMs, baseMs * 2 ** Math.max(0, n - 1));
  return Math.round(nominal / 2 + random() * (nominal / 2));
}
