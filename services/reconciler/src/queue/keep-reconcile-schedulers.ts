import type { Queue } from 'bullmq';
import type { Logger } from '@agent-saga/core';
import {
  SCAN_SCHEDULER_ID,
  SWEEP_SCHEDULER_ID,
  upsertReconcileSchedulers,
  type ReconcileJob,
} from './reconcile-queue.js';

/** A running keeper of the reconcile schedulers. */
export interface ReconcileSchedulerKeeper {
  /** Checks now (what the timer does); resolves with whether it re-created them. Never rejects. */
  check(): Promise<boolean>;
  /** Stops the timer and waits for a check under way. */
  stop(): Promise<void>;
}

/**
 * Keeps the sweep and scan job schedulers in Redis for as long as the process runs: every `sweepMs` it asks
 * Redis whether both still exist and, if either is gone, upserts both again.
 *
 * Why: the schedulers live only in Redis. A Redis restarted without persistence (how it runs on these
 * machines and in many deployments) or flushed comes back without them, and then no sweep runs (UNKNOWN
 * steps, approval deadlines, run follow-ups and correction sends all wait) until some reconciler restarts.
 * This brings them back within one tick of Redis answering again, with no restart.
 *
 * Decision: keep the BullMQ schedulers and re-assert them from a local timer, rather than move the sweep to
 * a local timer of each process. The sweep's safety never depended on the trigger: its claim is
 * `FOR UPDATE SKIP LOCKED` under a reconcile lease, so several reconcilers never work one row whichever way
 * sweeps are started; the scheduler only keeps the cadence one sweep per interval for the whole pool
 * instead of one per process. Upserting is idempotent (same ids, same interval: BullMQ replaces the next
 * job at the same time), so several processes re-creating them at once still leave one of each.
 *
 * Why a check first rather than an upsert every tick: an upsert rewrites the scheduler's next job; a check
 * is one read per scheduler. Why every `sweepMs`: the bound after Redis returns is then one sweep interval
 * (plus the worker's reconnect), and a check every interval costs Redis less than the sweep it schedules.
 * A timer rather than the connection's 'ready' event: it also covers a Redis flushed under a live
 * connection. A check that fails (Redis still down: the queue's connection fails fast) is logged at debug
 * and the next tick tries again.
 */
export function keepReconcileSchedulers(
  queue: Queue<ReconcileJob>,
  every: { readonly sweepMs: number; readonly scanMs: number },
  logger: Logger,
): ReconcileSchedulerKeeper {
  let checking: Promise<boolean> | undefined;
  let stopped = false;

  async function checkOnce(): Promise<boolean> {
    try {
      const [sweep, scan] = await Promise.all([
        queue.getJobScheduler(SWEEP_SCHEDULER_ID),
        queue.getJobScheduler(SCAN_SCHEDULER_ID),
      ]);
      if (sweep && scan) return false;
      await upsertReconcileSchedulers(queue, every);
      logger.warn(
        { sweep: Boolean(sweep), scan: Boolean(scan) },
        'reconcile schedulers were missing from Redis (restarted or flushed); re-created',
      );
      return true;
    } catch (err) {
      logger.debug({ err }, 'reconcile schedulers not checked (Redis unreachable?); the next tick retries');
      return false;
    }
  }

  const check = (): Promise<boolean> => {
    if (stopped) return Promise.resolve(false);
    checking ??= checkOnce().finally(() => (checking = undefined));
    return checking;
  };
  const timer = setInterval(() => void check(), every.sweepMs);

  return {
    check,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await checking;
    },
  };
}
