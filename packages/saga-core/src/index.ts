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
  OPEN_RUN_STATUSES,
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
export { ErrorCode } from './error-code.js';
export { equalJitterBackoffMs } from './equal-jitter-backoff.js';
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
// --- calling a tool: the one deadline-and-abort rule and the one tool call (issue 9, item 5) ---
export { callTool, type ToolCallResult } from './tools/call-tool.js';
export { runUnderDeadline, type Deadline, type DeadlineResult } from './tools/run-under-deadline.js';
export {
  createDb,
  pgConnectionConfig,
  stepSettledChannel,
  outboxChannel,
  unwindChannel,
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
export {
  migrateToLatest,
  migrateListToLatest,
  currentSchemaVersion,
  assertSchemaVersion,
  CORE_MIGRATIONS,
  type MigrationList,
} from './db/migrate.js';
export { EXPECTED_SCHEMA_VERSION } from './db/migrations/index.js';
export { appendStepEvent, appendStepEvents, type StepEventInput } from './saga-log/append-event.js';
export { transitionStep, notifyStepChanged, type TransitionInput } from './saga-log/transition-step.js';
export { recordIntent, type IntentInput } from './saga-log/record-intent.js';
// --- the outbox and its execute job: one schema and one builder for every writer and reader ---
export {
  EXECUTE_TOPIC,
  executeJobSchema,
  executeJobId,
  executeDispatch,
  type ExecuteJob,
  type ExecuteDispatch,
} from './outbox/execute-job.js';
export { enqueueExecution } from './outbox/enqueue-execution.js';
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
export { createStatementGroup, type StatementGroup } from './db/statement-group.js';
export { markOutcomesDelivered, type DeliveredOutcome } from './saga-log/mark-outcomes-delivered-batch.js';
export { recordNewIntents, type NewIntent } from './saga-log/record-new-intents.js';
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
  type RecordOutcomeInput,
  type RecordOutcomeResult,
} from './saga-log/record-outcome.js';
export type { StepOutcome } from './saga-log/step-outcome.js';
export {
  classifyToolError,
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
export { readLookupLag, type LookupLag } from './saga-log/lookup-lag.js';
// --- exports added by the one lookup rule (issue 9 item 5): every pool settles an unknown outcome with it ---
export {
  settleFromLookup,
  decideLookupVerdict,
  type LookupVerdict,
  type LookupSettlement,
  type SettleFromLookupInput,
} from './tools/settle-from-lookup.js';
// The database's clock for every lease and deadline (issue 9 item 5).
export { dbNowPlus, readDbNow, readDeadline, type DbDeadline } from './db/db-clock.js';
// --- exports added by the compensator's preconditions (optional `precondition` of a forward tool) ---
export {
  checkPrecondition,
  preconditionEvidence,
  type PreconditionObservation,
  type PreconditionTarget,
} from './tools/check-precondition.js';
export type { ForwardEffect, PreconditionCheck, PreconditionVerdict } from './tools/define-tool.js';
export { drainOnSignal, exitOnStartFailure } from './process/drain-on-signal.js';
export { startMetricsServer, stopMetricsServer, type MetricsSource } from './process/metrics-server.js';
// --- exports added by the compensator work ---
export { ReviewStatus } from './statuses.js';
export { RUN_TRANSITIONS, allowedRunSources } from './run-transitions.js';
export { COMPENSATION_TRANSITIONS, allowedCompensationSources } from './compensation-transitions.js';
export {
  transitionCompensation,
  type CompensationTransition,
} from './compensations/transition-compensation.js';
export { mirrorCompensationStatus } from './compensations/mirror-compensation-status.js';
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
export { requestUnwind, unwindReasonOf, type UnwindRequest } from './saga-log/request-unwind.js';
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
export { literals as sqlLiterals } from './metrics/sql-literals.js';
export { resolveCase, type CaseResolution } from './saga-log/resolve-case.js';
export { followUpRun, sweepRunFollowUps, type FollowUp } from './run-policy/follow-up-run.js';
export { ATTEMPTS_PER_EFFECT_BUCKETS } from './metrics/metric-buckets.js';
export { duplicateEffectCounter, attemptsPerEffectHistogram } from './metrics/effect-metrics.js';
export { lockLivePivot } from './approvals/lock-pivot.js';
export { lockReviewItem, type ReviewTable } from './saga-log/lock-review-item.js';
export { freePort } from './process/free-port.js';
export {
  bullmqConnection,
  bullmqWorkerConnection,
  bullmqProducerConnection,
  DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
} from './process/bullmq-connection.js';
// --- correction sends that survive a crash (issue 9, item 4; migration 0006) ---
export {
  CORRECTION_TRANSITIONS,
  allowedCorrectionSources,
  isLegalCorrectionTransition,
  SEND_UNDER_WAY,
} from './correction-transitions.js';
export { CorrectionSendingError, InvalidCorrectionTransitionError } from './errors.js';
export { CORRECTION_TOOL, correctionSendKey, correctionLeaseMs } from './corrections/correction-send-key.js';
export {
  transitionCorrection,
  type CorrectionTransitionInput,
  type CorrectionPatch,
} from './corrections/transition-correction.js';
export {
  startCorrectionSend,
  recordCorrectionSend,
  type StartSendInput,
  type CorrectionSendOutcome,
  type RecordSendInput,
} from './corrections/record-correction-send.js';
export { reviseCorrection, type ReviseInput } from './corrections/revise-correction.js';
export {
  settleCorrectionSend,
  settleStaleCorrectionSends,
  type CorrectionSettlement,
  type SettleCorrectionDeps,
} from './corrections/settle-correction-send.js';
// --- review: every machine a person decides on has its table and compare-and-set moves (issue 11) ---
export {
  compareAndSet,
  legalSources,
  type MachineTable,
  type TransitionTable,
  type CompareAndSetInput,
  type CompareAndSetResult,
  type CasGuard,
} from './db/compare-and-set.js';
export {
  APPROVAL_TRANSITIONS,
  allowedApprovalSources,
  isLegalApprovalTransition,
} from './approval-transitions.js';
export { CASE_TRANSITIONS, allowedCaseSources, isLegalCaseTransition } from './case-transitions.js';
export { InvalidApprovalTransitionError, InvalidCaseTransitionError } from './errors.js';
export { transitionApproval, type ApprovalTransitionInput } from './approvals/transition-approval.js';
export { transitionCase, type CaseTransitionInput } from './saga-log/transition-case.js';
export { planIntent, type IntentPlan } from './saga-log/plan-intent.js';
export { resourceOf } from './approvals/approval-resource.js';
export { stagePivot, type StagePivotInput, type PivotCommitStep } from './approvals/stage-pivot.js';
export { lockCorrection, refuseWhileSending, type CorrectionDecider } from './corrections/lock-correction.js';
export { editCorrection, type CorrectionEdit } from './corrections/edit-correction.js';
export { dismissCorrection } from './corrections/dismiss-correction.js';
export {
  sendCorrection,
  type SendCorrectionDeps,
  type CorrectionSend,
  type CorrectionSendResult,
} from './corrections/send-correction.js';
// --- surviving Postgres and Redis restarts (issue 9, item 1) ---
export { DEFAULT_PG_TIMEOUTS, type PgTimeouts } from './db/connect.js';
export { sagaDbOptions, type SagaDbConfig } from './process/open-saga-db.js';
export { WaitTimeoutError } from './errors.js';
export { withinMs } from './process/within-ms.js';
export { closeWithin, CLOSE_TIMEOUT_MS } from './process/close-within.js';
export { closeWorkerWithin, createRunningWork, type RunningWork } from './process/close-worker-within.js';
export {
  checkReadiness,
  probeDependency,
  postgresProbe,
  READINESS_CHECK_TIMEOUT_MS,
  type Readiness,
  type ReadinessCheck,
  type ReadinessProbes,
} from './process/readiness.js';
// --- no intent stranded, and the re-dispatch budget (issue 9, items 2 and 6) ---
export {
  republishUnclaimedIntents,
  DEFAULT_UNCLAIMED_REPUBLISH_MS,
  DEFAULT_REPUBLISH_BATCH,
  REPUBLISH_CAUSE,
  type RepublishInput,
  type Republished,
} from './saga-log/republish-unclaimed-intents.js';
export {
  enqueueNextDispatch,
  type NextDispatch,
  type NextDispatchInput,
} from './outbox/enqueue-next-dispatch.js';
export { DEFAULT_MAX_REDISPATCHES, redispatchBudgetConfig } from './saga-log/redispatch-budget.js';
export { type RedispatchSender } from './saga-log/redispatch-step.js';
// --- nothing irreversible after an unwind; commit steps only within their approval (issue 9, item 3) ---
export { EXECUTING_RUN_STATUSES } from './statuses.js';
export { startUnwind, type StartUnwindInput } from './saga-log/request-unwind.js';
export { withdrawUnclaimedSteps } from './saga-log/withdraw-unclaimed-steps.js';
export {
  withdrawPendingApprovals,
  type WithdrawApprovalsInput,
} from './approvals/withdraw-pending-approvals.js';
export { runWaitsForApproval } from './approvals/decide-approval.js';
export { runNotRunningCause } from './saga-log/claim-step.js';
export { checkCommitDeadline, type CommitDeadline, type LapsedHold } from './approvals/commit-deadline.js';
export { approvedVersionRefusal } from './approvals/approved-version.js';
export { confirmedEffectColumns } from './saga-log/confirmed-effect-columns.js';
