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
 * Every listener this adds is removed when the call ends, and the shutdown signal is followed by a listener
 * rather than `AbortSignal.any`: the shutdown signal lives as long as the process, and on Node 20 a
 * composite of it is kept alive while it has an abort listener (about 3 kB per call, with the call's
 * context and logger) and leaves a WeakRef in the shutdown signal's set of dependants even once collected.
 */
export async function runUnderDeadline<T>(
  deadline: Deadline,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<DeadlineResult<T>> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(deadline.timeoutError()), deadline.timeoutMs);
  const shutdown = deadline.shutdownSignal;
  // Fires with the reason of whichever comes first, as `AbortSignal.any([timeout, shutdown])` would.
  const combined = shutdown ? new AbortController() : timeout;
  const onTimeout = (): void => combined.abort(timeout.signal.reason);
  const onShutdown = (): void => combined.abort(shutdown?.reason);
  if (shutdown?.aborted) combined.abort(shutdown.reason);
  else if (shutdown) {
    shutdown.addEventListener('abort', onShutdown, { once: true });
    timeout.signal.addEventListener('abort', onTimeout, { once: true });
  }
  const signal = combined.signal;
  let fire: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    fire = () => reject(signal.reason instanceof Error ? signal.reason : new OutcomeUnknownError('aborted'));
    if (signal.aborted) fire();
    else signal.addEventListener('abort', fire, { once: true });
  });
  aborted.catch(() => {}); // settled after the race is decided: not an unhandled rejection
  try {
    // `Promise.resolve().then`: a `run` that throws synchronously is a failed call, not a crash.
    const value = await Promise.race([Promise.resolve().then(() => run(signal)), aborted]);
    return { ok: true, value };
  } catch (error) {
    const reason = timeout.signal.aborted ? 'timeout' : shutdown?.aborted ? 'shutdown' : undefined;
    return { ok: false, error, reason };
  } finally {
    clearTimeout(timer);
    shutdown?.removeEventListener('abort', onShutdown);
    if (fire) signal.removeEventListener('abort', fire);
  }
}
