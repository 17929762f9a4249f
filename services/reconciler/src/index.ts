// The public surface of @agent-saga/reconciler: what the other services and the tests use. Named exports only.
export { loadReconcilerConfig, reconcilerConfigSchema, type ReconcilerConfig } from './config.js';
export {
  RECONCILE_QUEUE,
  RECONCILE_JOB_OPTIONS,
  reconcileJobSchema,
  reconcileJobId,
  createReconcileQueue,
  enqueueReconcile,
  upsertReconcileSchedulers,
  type ReconcileJob,
} from './queue/reconcile-queue.js';
export {
  createReconcilerWorker,
  reconcileLeaseMs,
  type ReconcilerWorker,
  type ReconcilerWorkerDeps,
  type ReconcileJobResult,
} from './worker/reconciler-worker.js';
export { reconcileStep, type ReconcileStepDeps } from './reconcile/reconcile-step.js';
export {
  settleReconcile,
  RECONCILER_LOOKUP_CAUSE,
  DUPLICATE_EFFECT_CAUSE,
  type RetryPolicy,
  type SettleResult,
} from './reconcile/settle-reconcile.js';
// The verdict of a reconcile pass is core's one lookup rule (`decideLookupVerdict`, `LookupVerdict`), and its
// backoff after a failed lookup core's one backoff (`equalJitterBackoffMs`).
export { claimReconcilableSteps, type ReconcileClaim } from './sql/claim-reconcilable-steps.js';
export { findStuckRuns, findStaleOutbox, findUnknownSteps, type LateWork } from './scan/find-stuck-work.js';
export {
  createReconcilerMetrics,
  ReconcileOutcome,
  type ReconcilerMetrics,
  type ReconcilerMetricsOptions,
} from './metrics/reconciler-metrics.js';
