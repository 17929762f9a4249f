// The public surface of @agent-saga/dispatcher: what tests and the other roles use. Named exports only.
// --- API ---
export { buildApi, type Api, type ApiApp } from './api/build-api.js';
export type { ApiDeps } from './api/api-deps.js';
export {
  createSettleWaiter,
  type SettleWaiter,
  type StepWatch,
  type WakeReason,
} from './api/settle-waiter.js';
export { UNKNOWN_OUTCOME_MESSAGE } from './api/call-outcome.js';
export { MAX_WAIT_MS } from './api/schemas.js';
export { UnauthorizedError, RunIdTakenError } from './api/api-errors.js';
export { createApiMetrics, type ApiMetrics } from './metrics/api-metrics.js';
// --- relay and executor ---
export { loadDispatcherConfig, dispatcherConfigSchema, type DispatcherConfig } from './config.js';
// The execute job's schema and builder are core's (`executeJobSchema`, `executeDispatch`); its queue is here.
export {
  EXECUTE_QUEUE,
  EXECUTE_JOB_OPTIONS,
  createExecuteQueue,
  publishExecute,
} from './queue/execute-queue.js';
export { createOutboxRelay, type OutboxRelay, type OutboxRelayDeps } from './relay/outbox-relay.js';
export {
  publishOutboxBatch,
  type PublishBatchInput,
  type PublishBatchResult,
} from './relay/publish-outbox-batch.js';
export { executeStep, type ExecuteStepDeps, type ExecuteStepResult } from './executor/execute-step.js';
export {
  createExecutorWorker,
  type ExecutorWorker,
  type ExecutorWorkerDeps,
} from './executor/executor-worker.js';
export { createInlineExecutor, type InlineExecutor } from './executor/inline-executor.js';
export { createWorkerMetrics, type WorkerMetrics } from './metrics/worker-metrics.js';
