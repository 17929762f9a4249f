import { UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import {
  closeWorkerWithin,
  createRunningWork,
  newWorkerId,
  expireDueApprovals,
  followUpRun,
  type InvariantChecker,
  redispatchBudgetOf,
  republishUnclaimedIntents,
  settleStaleCorrectionSends,
  stopOverdueRuns,
  sweepRunFollowUps,
  type Logger,
  type SagaDb,
  type StepRow,
  type ToolRegistry,
} from '@agent-saga/core';
import type { ReconcilerConfig } from '../config.js';
import type { ReconcilerMetrics } from '../metrics/reconciler-metrics.js';
import { RECONCILE_QUEUE, reconcileJobSchema, type ReconcileJob } from '../queue/reconcile-queue.js';
import { reconcileStep, type ReconcileStepDeps } from '../reconcile/reconcile-step.js';
import { createSlots } from '../reconcile/slots.js';
import { findStaleOutbox, findStuckRuns } from '../scan/find-stuck-work.js';
import { claimReconcilableSteps } from '../sql/claim-reconcilable-steps.js';

export type ReconcilerWorkerConfig = Pick<
  ReconcilerConfig,
  | 'SAGA_DB_SCHEMA'
  | 'SAGA_QUEUE_PREFIX'
  | 'RECONCILER_CONCURRENCY'
  | 'LOOKUP_RECHECK_MS'
  | 'RECONCILER_MAX_LOOKUP_ERRORS'
  | 'RECONCILER_MAX_UNKNOWN_AGE_MS'
  | 'RECONCILER_BACKOFF_BASE_MS'
  | 'RECONCILER_BACKOFF_MAX_MS'
  | 'RECONCILER_LEASE_MARGIN_MS'
  | 'RECONCILER_STUCK_RUN_MS'
  | 'RECONCILER_STALE_OUTBOX_MS'
  | 'RECONCILER_SWEEP_MS'
  | 'SAGA_MAX_REDISPATCHES'
  | 'SAGA_REDISPATCH_MIN_SPAN_MS'
  | 'SAGA_UNCLAIMED_REPUBLISH_MS'
>;

export interface ReconcilerWorkerDeps {
  readonly db: SagaDb;
  readonly registry: ToolRegistry;
  /** Checks a bound run's invariant before its pivot's end completes it (absent: such a run waits). */
  readonly invariants?: InvariantChecker;
  readonly config: ReconcilerWorkerConfig;
  readonly connection: ConnectionOptions;
  readonly logger: Logger;
  readonly metrics?: ReconcilerMetrics;
}

/** Why 100: see `DEFAULT_REPUBLISH_BATCH` (one short transaction per batch). */
const REPUBLISH_BATCH = 100;
/**
 * Why 3: with the default bound (20 s) a step republished three times has gone a minute with jobs
 * published and none claimed: no longer a lost job but no executor taking it (none running, or none with
 * the tool); each further republish logs a warning, and the unclaimed-intent alert fires.
 */
const REPUBLISHES_BEFORE_WARNING = 3;

/** What a job did: steps reconciled (sweep, step) or findings logged (scan). */
export type ReconcileJobResult =
  | { readonly kind: 'sweep'; readonly steps: number }
  | { readonly kind: 'step'; readonly outcome: string }
  | { readonly kind: 'scan'; readonly stuckRuns: number; readonly staleOutbox: number };

export interface ReconcilerWorker {
  readonly worker: Worker<ReconcileJob, ReconcileJobResult>;
  /** The owner id of this process's reconcile leases. */
  readonly reconcilerId: string;
  /** How long a reconcile lease lasts. */
  readonly leaseMs: number;
  start(): void;
  /**
   * Drains: no new job and no new claim; running lookups finish and record. BullMQ's bookkeeping in Redis
   * after them is bounded (`closeWorkerWithin`), so the drain ends even while Redis is unreachable.
   */
  close(): Promise<void>;
  /**
   * Republishes unclaimed intents now (what the process's own timer does every RECONCILER_SWEEP_MS);
   * resolves with how many. Never rejects: a failure is logged.
   */
  republishUnclaimed(): Promise<number>;
}

/**
 * The reconcile lease: the longest one step can take (two lookups, each bounded by its tool's timeout, and
 * the re-check pause between them) plus a margin. A reconciler that dies mid-step holds its rows this long.
 */
export function reconcileLeaseMs(
  registry: ToolRegistry,
  config: Pick<ReconcilerConfig, 'LOOKUP_RECHECK_MS' | 'RECONCILER_LEASE_MARGIN_MS'>,
): number {
  // Only tools with a lookup are ever reconciled (pure tools have no row).
  const longest = Math.max(
    0,
    ...registry
      .list()
      .filter((t) => t.lookup)
      .map((t) => t.timeoutMs),
  );
  return 2 * longest + config.LOOKUP_RECHECK_MS + config.RECONCILER_LEASE_MARGIN_MS;
}

/**
 * The reconciler pool of one process: a BullMQ worker on {@link RECONCILE_QUEUE} taking up to
 * RECONCILER_CONCURRENCY jobs, and as many step lookups at once, shared by every job through one set of
 * slots.
 *
 * A `sweep` claims as many due steps as there are free slots (`FOR UPDATE SKIP LOCKED` and a reconcile
 * lease: several processes sweep the same log without ever working one row twice), reconciles them, and
 * claims again while batches come back full. A `step` request waits for a slot and claims its one step if it
 * is due. A `scan` logs stuck runs and stale outbox messages (the gauges read the same on every scrape).
 */
export function createReconcilerWorker(d: ReconcilerWorkerDeps): ReconcilerWorker {
  const { config } = d;
  const reconcilerId = newWorkerId();
  const leaseMs = reconcileLeaseMs(d.registry, config);
  const slots = createSlots(config.RECONCILER_CONCURRENCY);
  const log = d.logger.child({ reconcilerId });
  const stepDeps: ReconcileStepDeps = {
    db: d.db,
    schema: config.SAGA_DB_SCHEMA,
    registry: d.registry,
    owner: reconcilerId,
    recheckMs: config.LOOKUP_RECHECK_MS,
    policy: {
      maxLookupErrors: config.RECONCILER_MAX_LOOKUP_ERRORS,
      maxUnknownAgeMs: config.RECONCILER_MAX_UNKNOWN_AGE_MS,
      backoffBaseMs: config.RECONCILER_BACKOFF_BASE_MS,
      backoffMaxMs: config.RECONCILER_BACKOFF_MAX_MS,
      redispatchBudget: redispatchBudgetOf(config),
    },
    logger: log,
    ...(d.metrics ? { metrics: d.metrics } : {}),
  };
  let stopping = false;
  let republishTimer: NodeJS.Timeout | undefined;
  let republishing: Promise<void> | undefined;
  /** The jobs running now (sweeps, requests, scans: Postgres and lookups, never Redis). */
  const running = createRunningWork();

  /**
   * Publishes again the intents whose jobs Redis lost (see `republishUnclaimedIntents`), batch after batch
   * while batches come back full. Driven by a timer of this process, not by the BullMQ sweep scheduler:
   * the scheduler lives in Redis, and the loss this repairs (a Redis restarted without persistence) takes
   * the scheduler with it. A failure (Postgres down, a statement timeout) is logged and the next tick tries
   * again: the reconciler never exits on a database error.
   */
  async function republish(): Promise<number> {
    let total = 0;
    try {
      while (!stopping) {
        const done = await republishUnclaimedIntents(d.db, {
          olderThanMs: config.SAGA_UNCLAIMED_REPUBLISH_MS,
          limit: REPUBLISH_BATCH,
          schema: config.SAGA_DB_SCHEMA,
        });
        total += done.length;
        for (const r of done) {
          d.metrics?.republished.inc({ tool: r.tool });
          const { runId, stepIdx, key, jobId, republishes } = r;
          const fields = { runId, stepIdx, key, jobId, republishes };
          if (r.republishes >= REPUBLISHES_BEFORE_WARNING)
            log.warn(
              { ...fields, unclaimedSeconds: Math.round(r.unclaimedSeconds) },
              'intent republished again and again and never claimed: is an executor with this tool running?',
            );
          else log.info(fields, 'unclaimed intent republished under a fresh job id');
        }
        if (done.length < REPUBLISH_BATCH) break;
      }
    } catch (err) {
      log.error({ err }, 'republish of unclaimed intents failed; retried at the next tick');
    }
    return total;
  }

  function republishTick(): void {
    if (stopping || republishing) return;
    republishing = republish()
      .then(() => undefined)
      .finally(() => (republishing = undefined));
  }

  /** Reconciles one claimed row; a failure (database down, deadlock) leaves the row to its lease's end. */
  async function work(row: StepRow, release: () => void): Promise<void> {
    try {
      await reconcileStep(stepDeps, row);
      // A settled commit step releases the next one; a failure may unwind its run (run policy).
      await followUpRun(d.db, row.run_id, config.SAGA_DB_SCHEMA, d.invariants);
    } catch (err) {
      log.error(
        { err, runId: row.run_id, stepIdx: row.step_idx },
        'reconcile failed; retried after the lease',
      );
    } finally {
      release();
    }
  }

  async function sweep(): Promise<ReconcileJobResult> {
    let steps = 0;
    while (!stopping) {
      const granted = slots.take(config.RECONCILER_CONCURRENCY);
      if (granted.length === 0) break;
      let rows: StepRow[];
      try {
        rows = await claimReconcilableSteps(d.db, {
          owner: reconcilerId,
          leaseMs,
          limit: granted.length,
          schema: config.SAGA_DB_SCHEMA,
        });
      } catch (err) {
        granted.forEach((r) => r());
        throw err;
      }
      granted.slice(rows.length).forEach((r) => r());
      await Promise.all(rows.map((row, i) => work(row, granted[i]!)));
      steps += rows.length;
      if (rows.length < granted.length) break;
    }
    if (!stopping) {
      // Deadlines and run policies ride on the same sweep: approvals past their deadline expire (a pivot's
      // run unwinds, releasing its holds), and runs whose follow-up a dead process missed move on.
      const expired = await expireDueApprovals(d.db, config.SAGA_DB_SCHEMA);
      if (expired.length) log.info({ approvals: expired }, 'approvals expired');
      // Runs past their deadline stop: they unwind (policy unwindOnFailure) or go to a person. One index
      // read (`runs_deadline`, open runs with a deadline only) when none is due.
      const overdue = await stopOverdueRuns(d.db, config.SAGA_DB_SCHEMA);
      if (overdue.length) log.info({ runs: overdue }, 'runs past their deadline stopped');
      await sweepRunFollowUps(d.db, config.SAGA_DB_SCHEMA, undefined, d.invariants);
      // Correction sends whose sender died (or whose outcome is unknown) are settled by the email lookup by
      // key; a failure here must not fail the sweep of steps, so it is logged and retried next sweep.
      await settleStaleCorrectionSends(d.db, d.registry, { recheckMs: config.LOOKUP_RECHECK_MS, log }).then(
        (settled) => {
          if (settled.length) log.info({ corrections: settled }, 'correction sends settled');
        },
        (err: unknown) => log.error({ err }, 'settling correction sends failed; the next sweep retries'),
      );
    }
    return { kind: 'sweep', steps };
  }

  async function one(key: string): Promise<ReconcileJobResult> {
    const release = await slots.acquire();
    try {
      if (stopping) return { kind: 'step', outcome: 'stopping' };
      const [row] = await claimReconcilableSteps(d.db, {
        owner: reconcilerId,
        leaseMs,
        limit: 1,
        key,
        schema: config.SAGA_DB_SCHEMA,
      });
      if (!row) return { kind: 'step', outcome: 'not-due' };
      const outcome = (await reconcileStep(stepDeps, row)).outcome;
      await followUpRun(d.db, row.run_id, config.SAGA_DB_SCHEMA, d.invariants);
      return { kind: 'step', outcome };
    } finally {
      release();
    }
  }

  async function scan(): Promise<ReconcileJobResult> {
    const [runs, outbox] = await Promise.all([
      findStuckRuns(d.db, config.RECONCILER_STUCK_RUN_MS),
      findStaleOutbox(d.db, config.RECONCILER_STALE_OUTBOX_MS),
    ]);
    if (runs.count > 0)
      log.warn(
        { count: runs.count, oldestAgeSeconds: runs.oldestAgeSeconds, runIds: runs.sample },
        'runs stuck in a non-terminal state',
      );
    if (outbox.count > 0)
      log.warn(
        { count: outbox.count, oldestAgeSeconds: outbox.oldestAgeSeconds, jobIds: outbox.sample },
        'outbox messages unpublished past the threshold',
      );
    return { kind: 'scan', stuckRuns: runs.count, staleOutbox: outbox.count };
  }

  const processor = async (job: Job<ReconcileJob>): Promise<ReconcileJobResult> => {
    const data = reconcileJobSchema.safeParse(job.data);
    if (!data.success) throw new UnrecoverableError(`reconcile job ${job.id} has malformed data`);
    switch (data.data.kind) {
      case 'sweep':
        return running.track(sweep());
      case 'step':
        return running.track(one(data.data.key));
      case 'scan':
        return running.track(scan());
      default: {
        const never: never = data.data;
        throw new UnrecoverableError(`unhandled reconcile job ${JSON.stringify(never)}`);
      }
    }
  };

  const worker = new Worker<ReconcileJob, ReconcileJobResult>(RECONCILE_QUEUE, processor, {
    connection: d.connection,
    prefix: config.SAGA_QUEUE_PREFIX,
    concurrency: config.RECONCILER_CONCURRENCY,
    autorun: false,
  });
  worker.on('failed', (job, err) => log.error({ err, jobId: job?.id }, 'reconcile job failed'));
  worker.on('error', (err) => log.error({ err }, 'reconciler worker error'));

  return {
    worker,
    reconcilerId,
    leaseMs,
    start() {
      worker.run().catch((err: unknown) => log.error({ err }, 'reconciler worker stopped'));
      republishTimer = setInterval(republishTick, config.RECONCILER_SWEEP_MS);
    },
    async close() {
      stopping = true;
      clearInterval(republishTimer);
      await closeWorkerWithin({
        what: 'the reconcile worker',
        close: () => worker.close(),
        running,
        logger: log,
      });
      await republishing;
    },
    republishUnclaimed: republish,
  };
}
