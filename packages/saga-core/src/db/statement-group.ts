/**
 * Groups the same write of concurrent jobs of one process into one statement, so N claims (or N outcome
 * records) cost one round trip and one commit instead of N: group commit, done by the client. Used by the
 * executor (claims, outcomes), the API (intake, reads, deliveries) and the compensator (its reads and writes).
 *
 * How a group forms: an item that arrives while no group of this kind is in flight is sent on the next turn
 * of the event loop (`setImmediate`, so the jobs that became ready in the same turn join it; unloaded, that
 * adds no measurable wait). Items that arrive while a group is in flight wait for it to finish and then go
 * together, up to `maxSize` per statement. So the group size follows the load: one item when idle, many
 * when the database is the bottleneck, with no timer to tune.
 *
 * `run` must return one result per item, in order. When a group's statement fails, each of its items is
 * run again alone, so one bad item cannot fail the jobs of the others; an item that fails alone rejects.
 */
export interface StatementGroup<I, O> {
  /** Adds `item` to the next group; resolves with its own result. */
  submit(item: I): Promise<O>;
}

interface Pending<I, O> {
  readonly item: I;
  readonly resolve: (o: O) => void;
  readonly reject: (e: unknown) => void;
}

/**
 * The first item of each `key` in a group, in the order they came, keyed: what a grouped statement sends
 * when two items of one group name the same row (a statement cannot write one row twice). The caller
 * answers each later one as its statement's compare-and-set would answer a loser (`null`), or sends it
 * down its slow path; `firsts.get(key(item)) === item` tells the two apart.
 */
export function firstPerKey<T>(items: readonly T[], key: (item: T) => string): Map<string, T> {
  const firsts = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    if (!firsts.has(k)) firsts.set(k, item);
  }
  return firsts;
}

export function createStatementGroup<I, O>(opts: {
  /** Largest group sent as one statement. */
  readonly maxSize: number;
  readonly run: (items: readonly I[]) => Promise<readonly O[]>;
}): StatementGroup<I, O> {
  let queue: Pending<I, O>[] = [];
  let inFlight = false;
  let scheduled = false;

  const schedule = (): void => {
    if (scheduled || inFlight || queue.length === 0) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      void flush();
    });
  };

  async function flush(): Promise<void> {
    if (inFlight || queue.length === 0) return;
    const group = queue.slice(0, opts.maxSize);
    queue = queue.slice(group.length);
    inFlight = true;
    try {
      await runGroup(group);
    } finally {
      inFlight = false;
      schedule();
    }
  }

  async function runGroup(group: readonly Pending<I, O>[]): Promise<void> {
    try {
      const out = await opts.run(group.map((p) => p.item));
      if (out.length !== group.length)
        throw new Error(`statement group returned ${out.length} of ${group.length}`);
      group.forEach((p, i) => p.resolve(out[i]!));
    } catch (err) {
      if (group.length === 1) {
        group[0]!.reject(err);
        return;
      }
      // Isolate the failure: each item alone, so only the item that fails by itself is rejected.
      await Promise.all(group.map((p) => runGroup([p])));
    }
  }

  return {
    submit(item) {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      });
    },
  };
}
