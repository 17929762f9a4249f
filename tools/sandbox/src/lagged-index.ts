/**
 * A search index that lags behind writes, as Stripe's search ("under normal operating conditions, data is
 * searchable in less than a minute") and Jira's JQL index both do. Every write records a snapshot of the
 * object with the time it was taken; a search sees, for each object, the newest snapshot older than the lag,
 * so it sees nothing of a new object, the previous state of an updated one, and a deleted one until the lag
 * has passed. Retrieve and list endpoints read the live store instead, so they stay consistent.
 *
 * The lag is read at query time, so changing it through `/__admin/config` applies to snapshots already taken.
 */
export class LaggedIndex<T> {
  readonly #history = new Map<string, { at: number; value: T | null }[]>();

  /** Records the state of `id` after a write; `null` records a deletion. */
  record(id: string, value: T | null, at: number = Date.now()): void {
    const entries = this.#history.get(id) ?? [];
    entries.push({ at, value });
    this.#history.set(id, entries);
  }

  /** Every object as a search made at `now` with the given lag sees it, in the order first recorded. */
  visible(lagMs: number, now: number = Date.now()): T[] {
    const horizon = now - lagMs;
    const out: T[] = [];
    for (const entries of this.#history.values()) {
      let seen: T | null = null;
      for (const entry of entries) {
        if (entry.at <= horizon) seen = entry.value;
        else break;
      }
      if (seen !== null) out.push(seen);
    }
    return out;
  }

  clear(): void {
    this.#history.clear();
  }
}
