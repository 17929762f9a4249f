import {
  listenChannel,
  stepSettledChannel,
  type ChannelListener,
  type DbOptions,
  type Logger,
} from '@agent-saga/core';

/** Why a {@link StepWatch.next} returned. */
export type WakeReason = 'notified' | 'timeout' | 'closed';

/** Interest in one step's key, registered before the caller reads the step. */
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
 * Waits for steps to settle without polling: one dedicated Postgres connection LISTENs on
 * `stepSettledChannel(schema)`, where `transitionStep` announces a step's key when it commits a settled
 * (or unknown) status, and wakes the requests watching that key. Watches are keyed by idempotency key; a
 * notification for a key nobody watches costs a map lookup.
 *
 * A lost session is reopened (see `listenChannel`); every watch is then woken, because notifications sent
 * while it was down are gone and each waiter must re-read its step.
 */
export function createSettleWaiter(opts: {
  /** Settings of the LISTEN session (`sagaDbOptions`: the API's schema and bounded waits). */
  readonly db: DbOptions;
  readonly logger: Logger;
}): SettleWaiter {
  const watches = new Map<string, Set<Entry>>();
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
    for (const set of watches.values()) for (const e of set) wake(e, reason);
  };

  async function start(): Promise<void> {
    listener = await listenChannel({
      db: opts.db,
      channel: stepSettledChannel(opts.db.schema),
      onNotify(key) {
        const set = key ? watches.get(key) : undefined;
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
      const entry: Entry = { pending: draining ? 'closed' : null, resolve: null, timer: null };
      let set = watches.get(key);
      if (!set) watches.set(key, (set = new Set()));
      set.add(entry);
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
          const s = watches.get(key);
          s?.delete(entry);
          if (s && s.size === 0) watches.delete(key);
        },
      };
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
