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
 * The abort signal of one bounded call, made when first read: it fires at the deadline or on shutdown,
 * and a signal first read after a cut-off is born aborted with the cut-off's reason.
 */
export interface AbortHandle {
  readonly signal: AbortSignal;
}

/**
 * The one rule for calling the real system: `run` gets an abort signal (`abort.signal`) that fires at
 * `timeoutMs` or on shutdown, and the caller stops waiting when it fires even if `run` ignores its signal
 * (a call that hangs is an error, never an answer). Never throws: a throw of `run` or a cut-off is
 * `ok: false`.
 *
 * What it costs per call, on every tool call's path (docs/benchmarks.md): one timer and one promise. The
 * `AbortController` is made only if `run` reads its signal (a tool that never looks at it, a quick call to a
 * local system, costs none: an `AbortController` is an `EventTarget`, about 1 kB). The wait ends by
 * whichever settles first, the call or a cut-off, through one settle function rather than a race of two
 * promises. The shutdown signal lives as long as the process, so a call adds no listener to it (Node's
 * `EventTarget` keeps one object per listener, and a composite from `AbortSignal.any` is kept alive while it
 * has an abort listener, about 3 kB per call on Node 20): the calls under way are a set behind one listener
 * per signal (`onShutdown`), and each call leaves it when it ends.
 */
export function runUnderDeadline<T>(
  deadline: Deadline,
  run: (abort: AbortHandle) => Promise<T>,
): Promise<DeadlineResult<T>> {
  return new Promise<DeadlineResult<T>>((resolve) => {
    let controller: AbortController | undefined;
    let cutBy: 'timeout' | 'shutdown' | undefined;
    let cutReason: unknown;
    let settled = false;
    let leave: (() => void) | undefined;
    const settle = (result: DeadlineResult<T>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      leave?.();
      resolve(result);
    };
    const cut = (by: 'timeout' | 'shutdown', reason: unknown): void => {
      if (settled) return; // a cut settles, so this is also the second cut-off
      cutBy = by;
      cutReason = reason;
      controller?.abort(reason);
      settle({
        ok: false,
        error: reason instanceof Error ? reason : new OutcomeUnknownError('aborted'),
        reason: by,
      });
    };
    const abort: AbortHandle = {
      get signal() {
        if (!controller) {
          controller = new AbortController();
          if (cutBy) controller.abort(cutReason);
        }
        return controller.signal;
      },
    };
    const timer = setTimeout(() => cut('timeout', deadline.timeoutError()), deadline.timeoutMs);
    const shutdown = deadline.shutdownSignal;
    // A shutdown already under way cuts the call here, before `leave` is set: `settle` then has none to call.
    if (shutdown) leave = onShutdown(shutdown, () => cut('shutdown', shutdown.reason));
    // `Promise.resolve().then`: a `run` that throws synchronously is a failed call, not a crash.
    Promise.resolve()
      .then(() => run(abort))
      .then(
        (value) => settle({ ok: true, value }),
        (error: unknown) => settle({ ok: false, error, reason: cutBy }),
      );
  });
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
