import {
  listenChannel,
  runChangedChannel,
  stepSettledChannel,
  type ChannelListener,
  type DbOptions,
  type Logger,
} from '@agent-saga/core';

/** Why a {@link StepWatch.next} returned. */
export type WakeReason = 'notified' | 'timeout' | 'closed';

/** Interest in one step's key (or a run's status), registered before the caller reads it. */
export interface StepWatch {
  /**
   * Resolves `notified` as soon as a NOTIFY for the key arrives (or arrived since the watch began or since
   * the last `next`), `timeout` after `timeoutMs`, `closed` when the waiter is draining. The caller re-reads
   * the step after every wake: a notification says "look again", not what the status is.
   */
  next(timeoutMs: number): Promise<WakeReason>;
  close(): void;
}

export interface SettleWaiter {
  /** Opens the dedicated connection and LISTENs; resolves once notifications are being received. */
  start(): Promise<void>;
  watch(key: string): StepWatch;
  /**
   * A wait no step's or run's NOTIFY wakes: only its timeout, the waiter draining (`closed`), or the LISTEN
   * session coming back (`notified`, as every watch is). For a request whose answer comes from elsewhere (the
   * inline attempt it runs), that must still answer at once on drain.
   */
  watchDrain(): StepWatch;
  /**
   * Interest in a run's status (woken by a NOTIFY of its id on `runChangedChannel`) and, when `stepKey` is
   * given, in that step of it too: a read of a run or of one step that waits for it to move.
   */
  watchRun(runId: string, stepKey?: string): StepWatch;
  /** Whether the LISTEN connection is up (a readiness check). */
  readonly listening: boolean;
  /** Wakes every watch with `closed` and makes new watches return `closed` at once (shutdown). */
  drain(): void;
  close(): Promise<void>;
}

interface Entry {
  pending: WakeReason | null;
  resolve: ((r: WakeReason) => void) | null;
  timer: NodeJS.Timeout | null;
}

/**
 * Waits for steps to settle and runs to move without polling: one dedicated Postgres connection LISTENs on
 * `stepSettledChannel(schema)`, where `transitionStep` announces a step's key when it commits a settled
 * (or unknown) status, and on `runChangedChannel(schema)`, where every move of a run's status announces
 * the run's id, and wakes the requests watching that key or run. A notification nobody watches costs a map
 * lookup.
 *
 * A lost session is reopened (see `listenChannel`); every watch is then woken, because notifications sent
 * while it was down are gone and each waiter must re-read its step.
 */
export function createSettleWaiter(opts: {
  /** Settings of the LISTEN session (`sagaDbOptions`: the API's schema and bounded waits). */
  readonly db: DbOptions;
  readonly logger: Logger;
}): SettleWaiter {
  const steps = new Map<string, Set<Entry>>();
  const runs = new Map<string, Set<Entry>>();
  /** The entries of `watchDrain`: in no map of ids, woken only when every watch is. */
  const drainOnly = new Set<Entry>();
  const stepChannel = stepSettledChannel(opts.db.schema);
  let listener: ChannelListener | null = null;
  let listening = false;
  let draining = false;

  const wake = (entry: Entry, reason: WakeReason): void => {
    if (entry.resolve) {
      const resolve = entry.resolve;
      entry.resolve = null;
      if (entry.timer) clearTimeout(entry.timer);
      entry.timer = null;
      resolve(reason);
    } else if (entry.pending !== 'closed') entry.pending = reason;
  };
  const wakeAll = (reason: WakeReason): void => {
    for (const m of [steps, runs]) for (const set of m.values()) for (const e of set) wake(e, reason);
    for (const e of drainOnly) wake(e, reason);
  };

  /**
   * One entry, woken by a NOTIFY of any of `under` (a map and the id it is filed under there); with none,
   * filed in `drainOnly`.
   */
  function register(under: readonly (readonly [Map<string, Set<Entry>>, string])[]): StepWatch {
    const entry: Entry = { pending: draining ? 'closed' : null, resolve: null, timer: null };
    if (under.length === 0) drainOnly.add(entry);
    for (const [m, id] of under) {
      let set = m.get(id);
      if (!set) m.set(id, (set = new Set()));
      set.add(entry);
    }
    return {
      next(timeoutMs) {
        if (entry.pending) {
          const reason = entry.pending;
          if (reason !== 'closed') entry.pending = null;
          return Promise.resolve(reason);
        }
        return new Promise<WakeReason>((resolve) => {
          entry.resolve = resolve;
          entry.timer = setTimeout(() => wake(entry, 'timeout'), Math.max(0, timeoutMs));
        });
      },
      close() {
        wake(entry, 'closed');
        drainOnly.delete(entry);
        for (const [m, id] of under) {
          const set = m.get(id);
          set?.delete(entry);
          if (set && set.size === 0) m.delete(id);
        }
      },
    };
  }

  async function start(): Promise<void> {
    listener = await listenChannel({
      db: opts.db,
      channel: [stepChannel, runChangedChannel(opts.db.schema)],
      onNotify(id, channel) {
        const set = id ? (channel === stepChannel ? steps : runs).get(id) : undefined;
        if (set) for (const e of set) wake(e, 'notified');
      },
      onError(err) {
        listening = false;
        opts.logger.warn({ err }, 'settle waiter lost its LISTEN connection; reconnecting');
      },
      onReconnect() {
        listening = true;
        // Notifications sent while the session was down are gone: every waiter must look again.
        wakeAll('notified');
      },
    });
    listening = true;
  }

  return {
    start,
    get listening() {
      return listening;
    },
    watch(key) {
      return register([[steps, key]]);
    },
    watchDrain() {
      return register([]);
    },
    watchRun(runId, stepKey) {
      return register(
        stepKey === undefined
          ? [[runs, runId]]
          : [
              [runs, runId],
              [steps, stepKey],
            ],
      );
    },
    drain() {
      draining = true;
      wakeAll('closed');
    },
    async close() {
      draining = true;
      wakeAll('closed');
      listening = false;
      const l = listener;
      listener = null;
      if (l) await l.stop();
    },
  };
}
