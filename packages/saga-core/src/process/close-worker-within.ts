import type { Logger } from './logger.js';
import { CLOSE_TIMEOUT_MS, closeWithin } from './close-within.js';

/**
 * The work a queue worker is running right now (a job's tool call and its record, a sweep, an unwind
 * slice): what a drain must let finish, as opposed to the worker's bookkeeping in Redis around it.
 */
export interface RunningWork {
  /** Counts `work` as running until it settles; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T>;
  /** How many tracked promises have not settled yet. */
  readonly size: number;
  /** Resolves once nothing tracked is running (at once when nothing is). */
  idle(): Promise<void>;
}

/** A new, empty {@link RunningWork}. */
export function createRunningWork(): RunningWork {
  const running = new Set<Promise<unknown>>();
  return {
    track(work) {
      running.add(work);
      const untrack = (): void => void running.delete(work);
      work.then(untrack, untrack);
      return work;
    },
    get size() {
      return running.size;
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

/**
 * Closes a BullMQ worker during a drain, bounded even while its Redis is unreachable.
 *
 * `close` is the worker's `close()`: it stops taking jobs, waits for the running ones, then for their
 * bookkeeping in Redis (each job moved to completed, locks released, connections quit). A worker's
 * connection waits through a Redis outage by design (`bullmqWorkerConnection`), so with Redis down that
 * bookkeeping never ends, nor would the drain, nor the process.
 *
 * Decision: the work itself is never cut short here. This waits until `running` is idle, however long that
 * takes (the caller bounds it: it aborts running calls after its drain time, and they record UNKNOWN), and
 * only then gives BullMQ `timeoutMs` to finish; past that, the process exits without it. What that loses is
 * harmless: a job whose completion never reached Redis is redelivered by the stalled check if Redis still
 * holds it, and its claim's compare-and-set finds the step settled. Work that started while BullMQ was
 * finishing (a job fetched just before the close) is waited for the same way before the next bound.
 */
export async function closeWorkerWithin(o: {
  readonly what: string;
  readonly close: () => Promise<unknown>;
  readonly running: RunningWork;
  readonly logger: Logger;
  readonly timeoutMs?: number;
}): Promise<void> {
  const closing = o.close();
  closing.catch(() => {});
  for (;;) {
    await o.running.idle();
    await closeWithin(o.what, () => closing, o.logger, o.timeoutMs ?? CLOSE_TIMEOUT_MS);
    if (o.running.size === 0) return;
  }
}
