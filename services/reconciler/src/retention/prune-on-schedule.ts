import { pruneLog, type Logger, type PruneLogResult, type SagaDb } from '@agent-saga/core';

/** The retention job of a reconciler process, as its entry point starts and drains it. */
export interface PruneSchedule {
  /** Runs one prune now (what the timer does); resolves with its result, or undefined if it failed. */
  runOnce(): Promise<PruneLogResult | undefined>;
  /** Stops the timer; a prune under way stops after its current batch, and this waits for it. */
  stop(): Promise<void>;
}

export interface PruneScheduleOptions {
  readonly db: SagaDb;
  readonly logger: Logger;
  /** SAGA_PRUNE_OLDER_THAN, in ms. */
  readonly olderThanMs: number;
  /** SAGA_PRUNE_INTERVAL_MS. */
  readonly intervalMs: number;
  /** SAGA_PRUNE_BATCH_SIZE. */
  readonly batchSize: number;
}

/**
 * Runs core's `pruneLog` every `intervalMs` (the first run one interval after start, so a process that
 * restarts in a loop does not prune on every boot), and logs what each run deleted.
 *
 * Decision: a timer in every reconciler, not a BullMQ job scheduler. The prune takes a per-schema advisory
 * lock in Postgres, so however many reconcilers run, one prunes at a time and the others log `busy` and
 * wait for their next tick; a timer needs nothing from Redis, so retention goes on through a Redis outage.
 * A run that fails (Postgres down) is logged and the next tick tries again; the timer never overlaps runs
 * of one process (the next is armed when the current ends).
 */
export function pruneOnSchedule(o: PruneScheduleOptions): PruneSchedule {
  const abort = new AbortController();
  let running: Promise<PruneLogResult | undefined> | undefined;
  let timer: NodeJS.Timeout | undefined;

  async function pruneOnce(): Promise<PruneLogResult | undefined> {
    const started = performance.now();
    try {
      const r = await pruneLog(o.db, {
        olderThanMs: o.olderThanMs,
        batchSize: o.batchSize,
        signal: abort.signal,
      });
      const ms = Math.round(performance.now() - started);
      if (r.busy) o.logger.info({ cutoff: r.cutoff }, 'retention: another prune of this schema is under way');
      else
        o.logger.info(
          {
            outboxRows: r.outboxRows,
            stepEvents: r.stepEvents,
            batches: r.batches,
            cutoff: r.cutoff,
            stopped: r.stopped,
            ms,
          },
          'retention: pruned published outbox rows and step events of final runs',
        );
      return r;
    } catch (err) {
      o.logger.warn({ err }, 'retention: prune failed; the next interval tries again');
      return undefined;
    }
  }

  const runOnce = (): Promise<PruneLogResult | undefined> => {
    running ??= pruneOnce().finally(() => (running = undefined));
    return running;
  };

  const arm = (): void => {
    if (abort.signal.aborted) return;
    timer = setTimeout(() => void runOnce().then(arm), o.intervalMs);
  };
  arm();

  return {
    runOnce,
    async stop() {
      abort.abort();
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
