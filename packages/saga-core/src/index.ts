// The public surface of @agent-saga/core. Named exports only: what is not here is internal.
export {
  ToolClass,
  StepStatus,
  RunStatus,
  CompensationStatus,
  Audience,
  TokenRole,
  StepEventKind,
  SETTLED_STEP_STATUSES,
  UNRESOLVED_STEP_STATUSES,
  TERMINAL_RUN_STATUSES,
  valuesOf,
} from './statuses.js';
export { STEP_TRANSITIONS, allowedSources, isLegalTransition } from './step-transitions.js';
export {
  SagaError,
  ClientError,
  OutcomeUnknownError,
  ToolDefinitionError,
  ToolNotRegisteredError,
  InvalidArgsError,
  InvalidTransitionError,
  StepConflictError,
  StepUnresolvedError,
  IdempotencyMismatchError,
  RunNotRunningError,
  NotFoundError,
  SchemaVersionMismatchError,
  ConfigError,
} from './errors.js';
export { stepKey, compensationKey } from './idempotency-key.js';
export { canonicalJson, correctionHash, payloadHash } from './canonical-json.js';
export { ref, isStepRef, resolveRefs, type StepRef } from './tools/ref.js';
export {
  defineTool,
  DEFAULT_TOOL_TIMEOUT_MS,
  type Tool,
  type AnyTool,
  type ToolSpec,
  type ToolContext,
  type LookupContext,
  type ToolEffect,
  type CompensationCommand,
  type CorrectionCommand,
} from './tools/define-tool.js';
export { createToolRegistry, type ToolRegistry } from './tools/tool-registry.js';
export { parseArgs, readPath, redactArgs } from './tools/parse-args.js';
export { loadToolRegistry } from './tools/load-tools.js';
export {
  createDb,
  pgConnectionConfig,
  stepSettledChannel,
  outboxChannel,
  SCHEMA_NAME,
  type SagaDb,
  type SagaTrx,
  type DbOptions,
} from './db/connect.js';
export type {
  Database,
  RunRow,
  StepRow,
  StepPatch,
  StepEventRow,
  OutboxRow,
  StoredCompensation,
} from './db/schema.js';
export { migrateToLatest, currentSchemaVersion, assertSchemaVersion } from './db/migrate.js';
export { EXPECTED_SCHEMA_VERSION } from './db/migrations/index.js';
export { appendStepEvent, type StepEventInput } from './saga-log/append-event.js';
export { transitionStep, notifyStepChanged, type TransitionInput } from './saga-log/transition-step.js';
export { recordIntent, enqueueExecution, EXECUTE_TOPIC, type IntentInput } from './saga-log/record-intent.js';
export {
  createRun,
  getRun,
  lockRun,
  listSteps,
  touchRun,
  RUN_ID,
  listRuns,
  type RunListRow,
  type CreateRunResult,
} from './saga-log/runs.js';
export { baseConfigSchema, parseConfig, envInt, type BaseConfig } from './config.js';
export { createLogger, REDACT_PATHS, type Logger } from './logger.js';
export { CrashPoint, createCrashPoints } from './crash-point.js';
export { createApiToken, verifyApiToken, hashToken, type Principal } from './auth/api-tokens.js';
// --- exports added by the dispatcher work (keep one line per module) ---
export { redispatchStep, type RedispatchInput, type Redispatch } from './saga-log/redispatch-step.js';
export { markOutcomeDelivered } from './saga-log/mark-outcome-delivered.js';
export { preparedAs } from './db/prepared-statements.js';
export { markOutcomesDelivered, type DeliveredOutcome } from './saga-log/mark-outcomes-delivered-batch.js';
export { listStepEvents } from './saga-log/list-step-events.js';
export {
  claimStep,
  claimStepSlow,
  LEASE_EXPIRED_CAUSE,
  type ClaimInput,
  type ClaimResult,
} from './saga-log/claim-step.js';
export { claimStepBatch, type ClaimRequest, type ClaimBatchInput } from './saga-log/claim-step-batch.js';
export { recordOutcomeBatch, type OutcomeRecord } from './saga-log/record-outcome-batch.js';
export {
  recordOutcome,
  recordOutcomeSlow,
  LATE_OUTCOME_CAUSE,
  type StepOutcome,
  type RecordOutcomeInput,
  type RecordOutcomeResult,
} from './saga-log/record-outcome.js';
export {
  classifyToolError,
  ToolErrorCode,
  type StoredToolError,
  type ToolErrorOutcome,
} from './saga-log/classify-tool-error.js';
export { listenChannel, type ChannelListener, type ListenOptions } from './db/listen-channel.js';
// --- exports added by the connectors work (email drafts) ---
export { EmailDraftStatus } from './statuses.js';
export type { EmailDraftsTable, EmailDraftRow } from './db/schema.js';
// --- exports added by the reconciler work (lookups shared by the API's inline form and the reconciler) ---
export {
  lookupByKey,
  lookupEvidence,
  type LookupObservation,
  type LookupTarget,
} from './tools/lookup-by-key.js';
export { lookupLagPassed, type LookupLag } from './saga-log/lookup-lag.js';
// --- exports added by the compensator's preconditions (optional `precondition` of a forward tool) ---
export {
  checkPrecondition,
  preconditionEvidence,
  type ForwardEffect,
  type PreconditionCheck,
  type PreconditionVerdict,
  type PreconditionObservation,
  type PreconditionTarget,
} from './tools/check-precondition.js';
export { drainOnSignal, exitOnStartFailure } from './process/drain-on-signal.js';
export { startMetricsServer, stopMetricsServer, type MetricsSource } from './process/metrics-server.js';
// --- exports added by the compensator work ---
export { ReviewStatus } from './statuses.js';
export { RUN_TRANSITIONS, allowedRunSources } from './run-transitions.js';
export { COMPENSATION_TRANSITIONS, allowedCompensationSources } from './compensation-transitions.js';
export { InvalidRunTransitionError } from './errors.js';
export { transitionRun, type RunTransitionInput } from './saga-log/transition-run.js';
export {
  listCorrections,
  listCases,
  listApprovals,
  approvalQueue,
  caseQueue,
  correctionQueue,
  stepsOfRuns,
  getApproval,
  type QueueFilter,
} from './saga-log/list-review-items.js';
export type {
  CompensationsTable,
  CompensationRow,
  CorrectionsTable,
  CorrectionRow,
  CasesTable,
  CaseRow,
} from './db/schema.js';
export {
  requestUnwind,
  unwindChannel,
  unwindReasonOf,
  type UnwindRequest,
} from './saga-log/request-unwind.js';
export { completeRun } from './saga-log/complete-run.js';
export { openSagaDb } from './process/open-saga-db.js';
// --- approvals, the pivot and the operator's decisions (migration 0005) ---
export { ApprovalKind, ApprovalStatus, CorrectionStatus, CaseAction } from './statuses.js';
export {
  ForbiddenError,
  PivotRequiredError,
  PivotStagedError,
  ApprovalHashMismatchError,
  ApprovalDecidedError,
  ApprovalExpiredError,
  CaseActionError,
} from './errors.js';
export type { ApprovalsTable, ApprovalRow, RunPolicy } from './db/schema.js';
export { proposalHash, type ProposedStep } from './approvals/proposal-hash.js';
export { createApproval, type NewApproval } from './approvals/create-approval.js';
export {
  decideApproval,
  expireApproval,
  expireDueApprovals,
  Decision,
  type DecisionInput,
  type DecisionResult,
} from './approvals/decide-approval.js';
export { closeApproval, refuseApprovedSteps } from './approvals/settle-approval.js';
export { releaseHeldStep, type ReleaseInput } from './approvals/release-held-step.js';
export { advanceCommit, type CommitProgress } from './approvals/advance-commit.js';
export { openCase, type NewCase } from './saga-log/open-case.js';
// --- observability: the gauges derived from the saga log (one collector, opt-in per role) ---
export {
  registerSagaLogGauges,
  SagaLogGaugeGroup,
  DEFAULT_STUCK_RUN_MS,
  DEFAULT_STALE_OUTBOX_MS,
  type SagaLogGaugesOptions,
} from './metrics/saga-log-gauges.js';
export { sagaLogGaugesConfig } from './metrics/saga-log-gauges-config.js';
export { DEFAULT_CAPTURE_CHECKS, type CaptureCheck } from './metrics/read-capture-checks.js';
export { resolveCase, type CaseResolution } from './saga-log/resolve-case.js';
export { followUpRun, sweepRunFollowUps, type FollowUp } from './run-policy/follow-up-run.js';
export { ATTEMPTS_PER_EFFECT_BUCKETS } from './metrics/metric-buckets.js';
export { duplicateEffectCounter, attemptsPerEffectHistogram } from './metrics/effect-metrics.js';
export { lockLivePivot } from './approvals/lock-pivot.js';
export { lockReviewItem, type ReviewTable } from './saga-log/lock-review-item.js';
export { freePort } from './process/free-port.js';
export { bullmqConnection } from './process/bullmq-connection.js';
