import type { LookupLag, LookupObservation, ToolEffect } from '@agent-saga/core';

/**
 * What the lookups of one reconcile pass prove about a step, before the step's counters are consulted:
 * - `found`: the effect exists; the step is CONFIRMED with it (`effect.duplicates`: an incident too).
 * - `absent`: two lookups, `recheckMs` apart and both after the tool's `lookupLagMs` had passed since the
 *   last attempt, found nothing: the call never took effect; the step is NOT_EXECUTED.
 * - `too-early`: nothing found, but the real system's search may not show the attempt yet; look again at
 *   `believableAt`. Not a failure: it does not count against the retry budget.
 * - `lookup-error`: the last lookup failed; nothing is learnt. Backoff, or MANUAL_INTERVENTION past the
 *   budget or the age limit.
 */
export type Verdict =
  | { readonly kind: 'found'; readonly effect: ToolEffect }
  | { readonly kind: 'absent' }
  | { readonly kind: 'too-early'; readonly believableAt: Date }
  | { readonly kind: 'lookup-error'; readonly error: { readonly name: string; readonly message: string } };

/**
 * Decides from the pass's observations, in the order they were made: one lookup, or a first "not found"
 * after the lag followed by its re-check. `lag` is the lag check made after a first "not found".
 */
export function decideVerdict(
  observations: readonly LookupObservation[],
  lag: LookupLag | undefined,
): Verdict {
  const last = observations.at(-1);
  if (!last) throw new RangeError('a verdict needs at least one lookup');
  switch (last.kind) {
    case 'found':
      return { kind: 'found', effect: last.effect };
    case 'error':
      return { kind: 'lookup-error', error: last.error };
    case 'absent': {
      const rechecked = observations.length >= 2 && observations.every((o) => o.kind === 'absent');
      if (lag?.passed && rechecked) return { kind: 'absent' };
      return { kind: 'too-early', believableAt: lag?.believableAt ?? new Date() };
    }
    default: {
      const never: never = last;
      throw new Error(`unhandled observation ${JSON.stringify(never)}`);
    }
  }
}

/**
 * Backoff after the `n`-th failed lookup of a step (n ≥ 1): `base · 2^(n-1)`, capped at `max`, with "equal
 * jitter" (half fixed, half random), so reconcilers that failed together against one vendor do not retry
 * together, yet every wait is at least half its nominal length.
 */
export function backoffMs(n: number, base: number, max: number, random: () => number = Math.random): number {
  const nominal = Math.min(max, base * 2 ** Math.max(0, n - 1));
  return Math.round(nominal / 2 + random() * (nominal / 2));
}
