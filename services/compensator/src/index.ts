// The public surface of @agent-saga/compensator: what tests and other roles use. Named exports only.
export { loadCompensatorConfig, compensatorConfigSchema, type CompensatorConfig } from './config.js';
export { openRunLocks, type RunLocks, type RunLocksOptions } from './claim/run-locks.js';
export { planUnwind, dependenciesOf, isExhausted, type UnwindPlan } from './unwind/compensation-order.js';
export { driveRun, type DriveResult } from './unwind/drive-run.js';
export type { UnwindDeps } from './unwind/unwind-deps.js';
export { createUnwindGroups, type UnwindGroups } from './unwind/unwind-groups.js';
export {
  createCompensatorWorker,
  type CompensatorWorker,
  type CompensatorWorkerDeps,
} from './worker/compensator-worker.js';
export {
  createCompensatorMetrics,
  CompensationOutcome,
  ManualInterventionKind,
  type CompensatorMetrics,
  type CompensatorMetricsOptions,
} from './metrics/compensator-metrics.js';
