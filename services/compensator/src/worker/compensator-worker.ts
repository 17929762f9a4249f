import {
  createRunningWork,
  listenChannel,
  newWorkerId,
  OutcomeUnknownError,
  RunStatus,
  unwindChannel,
  type ChannelListener,
  type DbOptions,
  type SagaDb,
} from '@agent-saga/core';
import { openRunLocks, type RunLocks } from '../claim/run-locks.js';
import { driveRun } from '../unwind/drive-run.js';
import type { UnwindDeps } from '../unwind/unwind-deps.js';
import { createUnwindGroups } from '../unwind/unwind-groups.js';

export interface CompensatorWorker {
  readonly workerId: string;
  /** Opens the lock session and the LISTEN, sweeps, and starts taking runs. */
  start(): Promise<void>;
  /**
   * Drains: no new run is taken; running compensations finish, or after `drainMs` are aborted (unknown);
   * then the lock session closes, which releases every run this process held.
   */
  close(drainMs: number): Promise<void>;
  /** Aborts the running compensations now (a second SIGTERM). */
  abortRunning(): void;
}

export type CompensatorWorkerDeps = Omit<UnwindDeps, 'workerId' | 'shutdownSignal' | 'groups'> & {
  /** Connection settings of the LISTEN session and of the run lock session (each its own, outside the pool). */
  readonly listenDb: DbOptions;
  /**
   * The pool the grouped statements go through (`RoleContext.groupDb`: plans made once per connection);
   * absent: `db`.
   */
  readonly groupDb?: SagaDb;
};

/**
 * Runs one sweep lists at most. Why 1,000: one index scan of a few milliseconds; when more are open, the
 * next sweep starts as soon as this one's runs have been taken (see `pump`), so a backlog is swept in pages
 * without waiting for COMPENSATOR_SWEEP_MS.
 */
const SWEEP_BATCH = 1_000;

/**
 * The compensator pool of one process: up to COMPENSATOR_CONCURRENCY runs driven at once (`driveRun`).
 *
 * Where unwinds come from: the run's status is the durable request (COMPENSATING, written by the API's
 * compare-and-set), so nothing can be lost between the API's commit and a compensator, and no queue stands
 * between them. A NOTIFY on `unwindChannel` names the run at once; a sweep every COMPENSATOR_SWEEP_MS lists
 * every COMPENSATING run (a missed NOTIFY, a dead peer's run, a run that waits on a backoff or a person).
 * Which process drives a run is decided by its advisory lock (`openRunLocks`): the runs named are tried in
 * one statement for as many as there are free slots, and a run is released when its slice ends. A peer
 * that dies releases its runs with its session, so they are taken at the next sweep. The process needs
 * Postgres alone: a Redis outage or a Redis that lost its data changes nothing here.
 */
export function createCompensatorWorker(d: CompensatorWorkerDeps): CompensatorWorker {
  const shutdown = new AbortController();
  const workerId = newWorkerId();
  const deps: UnwindDeps = {
    ...d,
    workerId,
    shutdownSignal: shutdown.signal,
    groups: createUnwindGroups(d.groupDb ?? d.db, workerId),
  };
  const { config, logger } = d;
  /** The unwind slices running now: what a drain waits for. */
  const slices = createRunningWork();
  /** Runs this process drives now, with the lock session generation their lock was taken in. */
  const driving = new Map<string, number>();
  /** Runs whose slice ended and whose lock is being released: not tried again until it is. */
  const releasing = new Set<string>();
  /** Runs named (by a sweep or a NOTIFY) and not yet tried, oldest first. */
  const named = new Set<string>();
  let toRelease: { readonly runId: string; readonly generation: number }[] = [];
  let locks: RunLocks | undefined;
  let listener: ChannelListener | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closing = false;
  let pumping = false;
  let sweeping = false;
  /** The last sweep listed a full batch: more COMPENSATING runs may wait beyond it. */
  let moreBeyondSweep = false;
  /** Runs taken since the last sweep: a full sweep whose runs peers hold all is not repeated at once. */
  let takenSinceSweep = 0;

  const free = () => config.COMPENSATOR_CONCURRENCY - driving.size;

  /** Takes named runs into free slots, one lock statement per round, until either runs out. */
  const pump = async (): Promise<void> => {
    if (pumping || closing || !locks) return;
    pumping = true;
    try {
      while (!closing && free() > 0 && named.size > 0) {
        const batch: string[] = [];
        for (const runId of named) {
          named.delete(runId);
          if (!driving.has(runId) && !releasing.has(runId)) batch.push(runId);
          if (batch.length >= free()) break;
        }
        if (batch.length === 0) continue;
        const { locked, generation } = await locks.tryLock(batch);
        takenSinceSweep += locked.length;
        for (const runId of locked) drive(runId, generation);
      }
    } catch (err) {
      // The lock session is down or the statement failed: the named runs come back with the next sweep.
      logger.warn({ err }, 'taking runs to unwind failed; the next sweep lists them again');
      named.clear();
    } finally {
      pumping = false;
    }
    // Every run of a full sweep was tried and some were taken: sweep again now rather than leave slots idle
    // until the next tick (the runs being driven come first again and are skipped).
    if (!closing && free() > 0 && named.size === 0 && moreBeyondSweep && takenSinceSweep > 0) void sweep();
  };

  const drive = (runId: string, generation: number): void => {
    driving.set(runId, generation);
    void slices
      .track(driveRun(deps, runId, config.COMPENSATOR_SLICE_MS))
      .then(
        (result) => logger.debug({ runId, result }, 'unwind slice ended'),
        (err: unknown) =>
          logger.error({ err, runId }, 'unwind slice failed; the next sweep takes the run again'),
      )
      .finally(() => {
        driving.delete(runId);
        releasing.add(runId);
        toRelease.push({ runId, generation });
        if (toRelease.length === 1) setImmediate(() => void release());
      });
  };

  /** Releases the locks of the slices that ended since the last release, in one statement per session. */
  const release = async (): Promise<void> => {
    const batch = toRelease;
    toRelease = [];
    const byGeneration = new Map<number, string[]>();
    for (const r of batch) {
      const runIds = byGeneration.get(r.generation) ?? [];
      runIds.push(r.runId);
      byGeneration.set(r.generation, runIds);
    }
    try {
      for (const [generation, runIds] of byGeneration) await locks?.unlock(runIds, generation);
    } catch (err) {
      // The session is gone, and its locks with it.
      logger.warn({ err }, 'releasing run locks failed; they went with their session');
    } finally {
      for (const r of batch) releasing.delete(r.runId);
    }
    void pump();
  };

  const name = (runId: string): void => {
    if (closing || driving.has(runId)) return;
    named.add(runId);
    void pump();
  };

  const sweep = async (): Promise<void> => {
    if (sweeping || closing) return; // the sweep under way lists what this one would
    sweeping = true;
    try {
      // Uses the partial index `runs_open`: the cost follows the open runs, not every run ever made.
      const open = await d.db
        .selectFrom('runs')
        .select('run_id')
        .where('status', '=', RunStatus.COMPENSATING)
        .orderBy('updated_at')
        .limit(SWEEP_BATCH)
        .execute();
      moreBeyondSweep = open.length === SWEEP_BATCH;
      takenSinceSweep = 0;
      for (const r of open) if (!driving.has(r.run_id)) named.add(r.run_id);
    } catch (err) {
      logger.error({ err }, 'sweep of compensating runs failed');
    } finally {
      sweeping = false;
    }
    void pump();
  };

  const abortRunning = (): void =>
    shutdown.abort(new OutcomeUnknownError('compensator shut down while the compensation was running'));

  return {
    workerId,
    async start() {
      locks = await openRunLocks(d.schema, {
        db: d.listenDb,
        // The old session's locks are gone: peers may take those runs; what this process still drives it
        // finishes (every write is a compare-and-set), and the sweep lists the rest.
        onReconnect: () => void sweep(),
        onError: (err) => logger.warn({ err }, 'run lock session error'),
      });
      listener = await listenChannel({
        db: d.listenDb,
        channel: unwindChannel(d.schema),
        onNotify: (runId) => void (runId ? name(runId) : sweep()),
        onReconnect: () => void sweep(),
        onError: (err) => logger.warn({ err }, 'unwind LISTEN connection error'),
      });
      await sweep();
      timer = setInterval(() => void sweep(), config.COMPENSATOR_SWEEP_MS);
    },
    async close(drainMs) {
      closing = true;
      clearInterval(timer);
      named.clear();
      await listener?.stop();
      const hurry = setTimeout(abortRunning, drainMs);
      try {
        await slices.idle();
      } finally {
        clearTimeout(hurry);
      }
      // Closing the session releases every lock it holds, released or not.
      await locks?.stop();
    },
    abortRunning,
  };
}
