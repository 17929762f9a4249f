import { OutcomeUnknownError } from '../errors/errors.js';

/** What a call bounded by {@link runUnderDeadline} came to. `reason` names which signal cut it off. */
export type DeadlineResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: unknown; readonly reason: 'timeout' | 'shutdown' | undefined };

/** How a call to the real system is bounded. */
export interface Deadline {
  readonly timeoutMs: number;
  /** The error the call ends with when `timeoutMs` passes. */
  readonly timeoutError: () => Error;
  /** Fires when the caller's process stops (a drain): the call is cut off with `reason: 'shutdown'`. */
  readonly shutdownSignal?: AbortSignal;
}

/**
 * The one rule for calling the real system: `run` gets an abort signal that fires at `timeoutMs` or on
 * shutdown, and the caller stops waiting when it fires even if `run` ignores its signal (a call that
 * hangs is an error, never an answer). Never throws: a throw of `run` or a cut-off is `ok: false`.
 *
 * One `AbortController` per call, aborted by whichever cut-off comes first, and no listener on it: the
 * timer and the shutdown end the wait themselves. The shutdown signal lives as long as the process, so a
 * call does not add a listener to it either (Node's `EventTarget` keeps one object per listener, and a
 * composite from `AbortSignal.any` is kept alive while it has an abort listener, about 3 kB per call on
 * Node 20): the calls under way are a set behind one listener per signal (`onShutdown`), and each call
 * leaves it when it ends. This is on every tool call's path (docs/benchmarks.md).
 */
export async function runUnderDeadline<T>(
  deadline: Deadline,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<DeadlineResult<T>> {
  const controller = new AbortController();
  let cutBy: 'timeout' | 'shutdown' | undefined;
  let endWait: (reason: unknown) => void = () => {};
  const cutOff = new Promise<never>((_, reject) => {
    endWait = (reason) => reject(reason instanceof Error ? reason : new OutcomeUnknownError('aborted'));
  });
  cutOff.catch(() => {}); // settled after the race is decided: not an unhandled rejection
  const cut = (by: 'timeout' | 'shutdown', reason: unknown): void => {
    if (cutBy) return;
    cutBy = by;
    controller.abort(reason);
    endWait(reason);
  };
  const timer = setTimeout(() => cut('timeout', deadline.timeoutError()), deadline.timeoutMs);
  const shutdown = deadline.shutdownSignal;
  const leave = shutdown ? onShutdown(shutdown, () => cut('shutdown', shutdown.reason)) : undefined;
  try {
    // `Promise.resolve().then`: a `run` that throws synchronously is a failed call, not a crash.
    const value = await Promise.race([Promise.resolve().then(() => run(controller.signal)), cutOff]);
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error, reason: cutBy };
  } finally {
    clearTimeout(timer);
    leave?.();
  }
}

/** Per shutdown signal, the cut-offs of the calls under way behind it. */
const underWay = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Runs `cut` when `signal` aborts (at once if it has), through one listener per signal; returns how the
 * call leaves the set when it ends.
 */
function onShutdown(signal: AbortSignal, cut: () => void): () => void {
  if (signal.aborted) {
    cut();
    return () => {};
  }
  const calls = underWay.get(signal) ?? callsBehind(signal);
  calls.add(cut);
  return () => calls.delete(cut);
}

/**
 * The set of calls under `signal` and its one listener. A function of its own so that the listener's
 * closure holds the set alone, not the first call's `cut` (a closure keeps its whole scope).
 */
function callsBehind(signal: AbortSignal): Set<() => void> {
  const calls = new Set<() => void>();
  signal.addEventListener('abort', () => [...calls].forEach((cut) => cut()), { once: true });
  underWay.set(signal, calls);
  return calls;
}
