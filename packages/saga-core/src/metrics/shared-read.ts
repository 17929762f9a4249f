/** What a shared read reports about itself (the collector turns these into its own health metrics). */
export interface SharedReadHooks {
  /** The read took this long (seconds), whether it succeeded or failed. */
  readonly onDuration: (seconds: number) => void;
  /** The read failed; the gauges that use it keep their last values. */
  readonly onError: (err: unknown) => void;
}

/**
 * One read shared by every gauge of a group. prom-client calls the `collect()` of every metric of a scrape
 * at once, so without this each gauge of a group would run the group's query again. The result is reused
 * while the read is in flight and for `ttlMs` after it ends: with 0, one read per scrape; with more, several
 * scrapers (a Prometheus HA pair) cost one read per `ttlMs`.
 *
 * A failed read is reported through `hooks.onError` and yields `undefined`, never a rejection: one broken
 * query must not turn the whole `/metrics` answer into a 500 and take the counters down with it. A failure
 * is not cached; the next scrape tries again.
 */
export function sharedRead<T>(
  read: () => Promise<T>,
  ttlMs: number,
  hooks: SharedReadHooks,
): () => Promise<T | undefined> {
  let inFlight: Promise<T | undefined> | undefined;
  let last: { readonly value: T; readonly at: number } | undefined;
  return () => {
    if (inFlight) return inFlight;
    if (last && Date.now() - last.at < ttlMs) return Promise.resolve(last.value);
    const started = performance.now();
    const done = () => {
      inFlight = undefined;
      hooks.onDuration((performance.now() - started) / 1000);
    };
    inFlight = read().then(
      (value) => {
        last = { value, at: Date.now() };
        done();
        return value;
      },
      (err: unknown) => {
        done();
        hooks.onError(err);
        return undefined;
      },
    );
    return inFlight;
  };
}
