// The public surface of @agent-saga/core, grouped by concept as the folders are. Named exports only: what is
// not here is internal.

// --- Tools: the class of each tool, its definition, registry and invocation, and the lookups by key in the real system ---
export { callTool, type ToolCallResult } from './tools/call-tool.js';
export {
  checkPrecondition,
  preconditionEvidence,
  type PreconditionObservation,
  type PreconditionTarget,
} from './tools/check-precondition.js';
export {
  defineTool,
  DEFAULT_TOOL_TIMEOUT_MS,
  MAX_TOOL_NAME,
  type Tool,
  type AnyTool,
  type ToolSpec,
  type ToolContext,
  type LookupContext,
  type ToolEffect,
  type CompensationCommand,
  type CorrectionCommand,
  type ForwardEffect,
  type PreconditionCheck,
  type PreconditionVerdict,
  type MoneyMove,
  type MoneyContext,
} from './tools/define-tool.js';
export { describeTool, describeTools, type ToolDescription } from './tools/describe-tool.js';
export { loadToolRegistry } from './tools/load-tools.js';
export { provideBundledModule } from './tools/import-module-file.js';
export {
  lookupByKey,
  lookupEvidence,
  type LookupObservation,
  type LookupTarget,
} from './tools/lookup-by-key.js';
export {
  refusedUnderKey,
  isRefusedUnderKey,
  refusalOf,
  refusalDetail,
  type RefusedUnderKey,
} from './tools/refused-under-key.js';
export {
  absenceEvidenceAfterMs,
  commitHorizonOf,
  readLookupLag,
  resendAfterMs,
  type LookupLag,
  type LookupTimings,
} from './tools/lookup-lag.js';
export { answeredUnderKey } from './tools/answered-under-key.js';
export { parseArgs, parseCallArgs, readPath, redactArgs } from './tools/parse-args.js';
export {
  PERSONAL_MARK,
  SECRET_MARK,
  redactCorrectionCommand,
  redactPaths,
  redactStep,
  seesPersonal,
  stepRedaction,
  type StepData,
  type StepRedaction,
  type ToolLookup,
  type Viewer,
} from './privacy/redact-personal.js';
export {
  argsForLog,
  errorForLog,
  logsAt,
  resultNamesForLog,
  LOGGED_HASH_LENGTH,
  type ArgsForLog,
} from './privacy/args-for-log.js';
export { findUnstorableText, unstorableReason } from './util/unstorable-text.js';
export { McpMetaKey } from './mcp/mcp-meta-key.js';
export { ref, isStepRef, resolveRefs, type StepRef } from './tools/ref.js';
export {
  runUnderDeadline,
  type AbortHandle,
  type Deadline,
  type DeadlineResult,
} from './tools/run-under-deadline.js';
export {
  settleFromLookup,
  decideLookupVerdict,
  type LookupVerdict,
  type LookupSettlement,
  type SettleFromLookupInput,
} from './tools/settle-from-lookup.js';
export { nextLookupAt, type TooEarlyLookup } from './tools/next-lookup.js';
export { ToolClass } from './tools/tool-class.js';
export { createToolRegistry, type ToolRegistry } from './tools/tool-registry.js';

// --- Sagas: definitions declared beside the tools, their dependency order, registry and loading ---
export {
  defineSaga,
  pivotStepOf,
  MAX_SAGA_STEPS,
  type SagaSpec,
  type SagaStepSpec,
  type SagaDefinition,
  type SagaStep,
} from './sagas/define-saga.js';
export { ancestorsOf, type DependencyNode } from './sagas/dependency-order.js';
export { loadToolModule, type ToolModule } from './sagas/load-tool-module.js';
export {
  moneyAmountsSchema,
  runBudgetSchema,
  sagaBudgetSchema,
  type MoneyAmounts,
  type RunBudgetInput,
  type SagaBudget,
  type StepRetry,
} from './sagas/saga-budget.js';
export { bindRun, UNBOUND_RUN, type RunBinding, type RunBindingRequest } from './sagas/bind-run.js';
export {
  NO_POLICY_FLOOR,
  policyFloorSchema,
  type FloorApplied,
  type PolicyFloor,
  type PolicyFloorInput,
  type TenantPolicyFloor,
} from './sagas/policy-floor.js';
export { applyPolicyFloor, type FlooredBinding } from './sagas/apply-policy-floor.js';
export { bindRunUnderFloor } from './sagas/bind-run-under-floor.js';
export { readPolicyFloor, type PolicyFloorReading } from './sagas/read-policy-floor.js';
export { setPolicyFloor, type PolicyFloorChange } from './sagas/set-policy-floor.js';
export { validatePlan, planHash, type PlanEntry, type ProposedPlanEntry } from './sagas/validate-plan.js';
export {
  bindCall,
  definitionRepeats,
  requireDefinition,
  requireToolInDefinition,
  type BindCallInput,
  type CallBinding,
  type MoneyHold,
} from './sagas/bind-call.js';
export { checkAttempts, checkBudget, checkDeadline } from './sagas/check-budget.js';
export { compensationMoneyContext, moneyContextOf, moneyOfCall, movedByRun } from './sagas/money-moved.js';
export type {
  InvariantEnding,
  InvariantLookupContext,
  InvariantLookups,
  InvariantRun,
  InvariantStep,
  InvariantVerdict,
  SagaInvariant,
  ToolModuleLookup,
  ToolModuleLookups,
} from './sagas/saga-invariant.js';
export {
  checkRunInvariant,
  definitionLabel,
  DEFAULT_INVARIANT_TIMEOUT_MS,
  type CheckedDefinition,
  type InvariantCheck,
  type InvariantChecker,
} from './sagas/check-run-invariant.js';
export { gateOnInvariant, type InvariantGate } from './sagas/gate-on-invariant.js';
export { sagaPolicySchema, type SagaPolicy } from './sagas/saga-policy.js';
export { createSagaRegistry, type SagaRegistry } from './sagas/saga-registry.js';
export { SagaDefinitionError } from './errors/errors.js';

// --- Steps: the status and events of a step, its idempotency key, intent, claim, outcome and re-dispatch ---
export { appendStepEvent, appendStepEvents, type StepEventInput } from './steps/append-event.js';
export { claimStepBatch, type ClaimRequest, type ClaimBatchInput } from './steps/claim/claim-step-batch.js';
export {
  claimStep,
  claimStepSlow,
  LEASE_EXPIRED_CAUSE,
  type ClaimInput,
  type ClaimResult,
  runNotRunningCause,
} from './steps/claim/claim-step.js';
export {
  withdrawalCause,
  withdrawUnclaimedStep,
  withdrawUnclaimedSteps,
  type WithdrawnStatus,
  type WithdrawStepInput,
} from './steps/claim/withdraw-unclaimed-steps.js';
export {
  earlierOperationSql,
  findDuplicateOperation,
  NEVER_TOOK_EFFECT_STATUSES,
  operationIdentity,
  operationParams,
  parseEarlierOperation,
  type EarlierOperation,
  type OperationIdentity,
  type OperationSql,
} from './steps/intent/find-duplicate-operation.js';
export { stepKey, compensationKey } from './steps/intent/idempotency-key.js';
export { planIntent, type IntentPlan } from './steps/intent/plan-intent.js';
export {
  recordIntent,
  callDecisionSchema,
  type CallDecision,
  type IntentInput,
} from './steps/intent/record-intent.js';
export { readStepDecisions } from './steps/intent/read-step-decisions.js';
export { recordNewIntents } from './steps/intent/record-new-intents.js';
export type { IntakeClaim, NewIntent } from './steps/intent/new-intent.js';
export { listStepEvents } from './steps/list-step-events.js';
export { INTAKE_CLAIM_CAUSE, STANDARD_EVENT_COLUMNS } from './steps/standard-events.js';
export {
  STEP_CHANGING_COLUMNS,
  STEP_FIXED_COLUMNS,
  STEP_ROW_COLUMNS,
  stepChangesColumns,
  stepRowColumns,
  stepSlot,
  stepSlotOf,
  withChanges,
  type StepChanges,
  type StepFixedColumn,
  type StepPatch,
} from './steps/step-row-columns.js';
export {
  classifyToolError,
  type StoredToolError,
  type ToolErrorOutcome,
} from './steps/outcome/classify-tool-error.js';
export { confirmedEffectColumns } from './steps/outcome/confirmed-effect-columns.js';
export { stepSettlement, type SettlingVerdict } from './steps/outcome/step-settlement.js';
export { markOutcomeDelivered } from './steps/outcome/mark-outcome-delivered.js';
export {
  markOutcomesDelivered,
  type DeliveredOutcome,
} from './steps/outcome/mark-outcomes-delivered-batch.js';
export { recordOutcomeBatch, type OutcomeRecord } from './steps/outcome/record-outcome-batch.js';
export {
  recordOutcome,
  recordOutcomeSlow,
  LATE_OUTCOME_CAUSE,
  type RecordOutcomeInput,
  type RecordOutcomeResult,
} from './steps/outcome/record-outcome.js';
export type { StepOutcome } from './steps/outcome/step-outcome.js';
export {
  DEFAULT_MAX_REDISPATCHES,
  DEFAULT_REDISPATCH_MIN_SPAN_MS,
  REDISPATCH_HARD_CAP_FACTOR,
  redispatchBudgetConfig,
  redispatchBudgetOf,
  redispatchBudgetSpent,
  type RedispatchBudget,
  type RedispatchCount,
} from './steps/redispatch/redispatch-budget.js';
export {
  redispatchStep,
  type RedispatchInput,
  type Redispatch,
  type RedispatchSender,
} from './steps/redispatch/redispatch-step.js';
export { mayResendUnproven, verdictForRun } from './steps/redispatch/may-resend-unproven.js';
export { StepEventKind } from './steps/step-event-kind.js';
export {
  StepStatus,
  SETTLED_STEP_STATUSES,
  UNRESOLVED_STEP_STATUSES,
  OPEN_STEP_STATUSES,
} from './steps/step-status.js';
export { STEP_TRANSITIONS, allowedSources, isLegalTransition } from './steps/step-transitions.js';
export { transitionStep, notifyStepChanged, type TransitionInput } from './steps/transition-step.js';

// --- Intake: the rules of a call for a new or retried step, in the API or in a caller's own transaction ---
export {
  callIntake,
  intentOf,
  logIntended,
  planOf,
  storedDependsOn,
  type IntakeOutcome,
  type IntakeRequest,
} from './intake/call-intake.js';
export { holdForApproval, type HeldCall } from './intake/hold-for-approval.js';
export { readDispatch } from './intake/read-dispatch.js';
export {
  recordCallerIntent,
  type CallerIntakeOptions,
  type CallerIntent,
  type CallerIntentRequest,
  type CallerTransaction,
} from './intake/record-caller-intent.js';
export { diffRetryArgs, type RetryArgsDiff } from './intake/retry-args.js';
export { resolveStep, type ResolutionInput, type StepResolution } from './intake/step-resolution.js';
export { DEFAULT_MAX_STEPS_PER_RUN, MAX_STEPS_PER_RUN_CEILING } from './intake/step-limit.js';
export {
  installKeyNamespace,
  currentKeyNamespace,
  keyNamespaceFingerprint,
  type KeyNamespace,
} from './steps/intent/key-namespace.js';

// --- Runs: a run's status, its transitions, rows, completion and follow-up ---
export { completeRun, completeCheckedRun } from './runs/complete-run.js';
export { followUpRun, sweepRunFollowUps, type FollowUp } from './runs/follow-up-run.js';
export {
  createRun,
  getRun,
  lockRun,
  lockRunById,
  listSteps,
  touchRun,
  RUN_ID,
  listRuns,
  type RunListRow,
  type CreateRunResult,
} from './runs/run-rows.js';
export { readRunUsage, type RunUsage, type UsedStep } from './runs/read-run-usage.js';
export { CURSOR_FLOOR_LAG, readRunCursor } from './runs/run-cursor.js';
export { assertRunInScope, getRunFor, visibleRunsOf, type RunAccess } from './runs/run-access.js';
export {
  RunStatus,
  TERMINAL_RUN_STATUSES,
  OPEN_RUN_STATUSES,
  EXECUTING_RUN_STATUSES,
} from './runs/run-status.js';
export { RUN_TRANSITIONS, allowedRunSources } from './runs/run-transitions.js';
export { transitionRun, type RunTransitionInput } from './runs/transition-run.js';

// --- Compensations: the unwind request and the state machine of each stored compensation ---
export { CompensationStatus } from './compensations/compensation-status.js';
export {
  COMPENSATION_TRANSITIONS,
  allowedCompensationSources,
} from './compensations/compensation-transitions.js';
export { mirrorCompensationStatus } from './compensations/mirror-compensation-status.js';
export {
  requestUnwind,
  unwindReasonOf,
  type UnwindRequest,
  startUnwind,
  type StartUnwindInput,
} from './compensations/request-unwind.js';
export {
  transitionCompensation,
  type CompensationTransition,
} from './compensations/transition-compensation.js';
export {
  stopOverdueRun,
  stopOverdueRuns,
  overdueRunsQuery,
  DEADLINE_UNWIND_REASON,
  type OverdueStop,
} from './compensations/stop-overdue-runs.js';

// --- Review, approvals: hash-bound human decisions on a pivot or a held step ---
export { resourceOf } from './review/approvals/approval-resource.js';
export { ApprovalKind, ApprovalStatus } from './review/approvals/approval-status.js';
export {
  APPROVAL_TRANSITIONS,
  allowedApprovalSources,
  isLegalApprovalTransition,
} from './review/approvals/approval-transitions.js';
export { approvedVersionRefusal } from './review/approvals/approved-version.js';
export { createApproval, type NewApproval } from './review/approvals/create-approval.js';
export {
  decideApproval,
  expireApproval,
  expireDueApprovals,
  Decision,
  type DecisionInput,
  type DecisionResult,
  runWaitsForApproval,
} from './review/approvals/decide-approval.js';
export { proposalHash, type ProposedStep } from './review/approvals/proposal-hash.js';
export { releaseHeldStep, type ReleaseInput } from './review/approvals/release-held-step.js';
export { closeApproval, refuseApprovedSteps } from './review/approvals/settle-approval.js';
export { transitionApproval, type ApprovalTransitionInput } from './review/approvals/transition-approval.js';
export { type Decider } from './review/decider.js';
export {
  withdrawPendingApprovals,
  type WithdrawApprovalsInput,
} from './review/approvals/withdraw-pending-approvals.js';
export {
  approvalNeed,
  authorityLapsed,
  recoveryPolicyOf,
  RECOVERY_APPROVAL_TTL_MS,
  type ApprovalNeed,
  type RecoveryPolicy,
} from './review/approvals/recovery-policy.js';
export {
  holdCompensation,
  releaseHeldCompensation,
  refuseHeldCompensation,
  type CompensationHold,
} from './review/approvals/hold-compensation.js';
export {
  recoveryPlanHash,
  requestRenewal,
  type RecoveryAction,
  type RenewalRequest,
} from './review/approvals/request-renewal.js';

// --- Review, the pivot: staging, locking and committing the irreversible steps an approval covers ---
export { advanceCommit, type CommitProgress } from './review/pivot/advance-commit.js';
export { checkCommitDeadline, type CommitDeadline, type LapsedHold } from './review/pivot/commit-deadline.js';
export { lockLivePivot } from './review/pivot/lock-pivot.js';
export { stagePivot, type StagePivotInput, type PivotCommitStep } from './review/pivot/stage-pivot.js';

// --- Review, cases: manual-intervention cases and an operator's resolution ---
export { CaseAction } from './review/cases/case-action.js';
export { ReviewStatus } from './review/cases/case-status.js';
export {
  CASE_TRANSITIONS,
  allowedCaseSources,
  isLegalCaseTransition,
} from './review/cases/case-transitions.js';
export { openCase, type NewCase } from './review/cases/open-case.js';
export { stopForPerson, type StopForPersonInput } from './review/cases/stop-for-person.js';
export { resolveCase, type CaseResolution } from './review/cases/resolve-case.js';
export { transitionCase, type CaseTransitionInput } from './review/cases/transition-case.js';

// --- Review, corrections: customer-facing corrections ranked by audience, sent through the intent log ---
export { Audience } from './review/corrections/audience.js';
export {
  CORRECTION_TOOL,
  correctionSendKey,
  correctionLeaseMs,
} from './review/corrections/correction-send-key.js';
export { CorrectionStatus } from './review/corrections/correction-status.js';
export {
  CORRECTION_TRANSITIONS,
  allowedCorrectionSources,
  isLegalCorrectionTransition,
  SEND_UNDER_WAY,
} from './review/corrections/correction-transitions.js';
export { dismissCorrection } from './review/corrections/dismiss-correction.js';
export { editCorrection, type CorrectionEdit } from './review/corrections/edit-correction.js';
export {
  lockCorrection,
  refuseWhileSending,
  type CorrectionDecider,
} from './review/corrections/lock-correction.js';
export {
  startCorrectionSend,
  recordCorrectionSend,
  type StartSendInput,
  type CorrectionSendOutcome,
  type RecordSendInput,
} from './review/corrections/record-correction-send.js';
export { reviseCorrection, type ReviseInput } from './review/corrections/revise-correction.js';
export {
  sendCorrection,
  type SendCorrectionDeps,
  type CorrectionSend,
  type CorrectionSendResult,
} from './review/corrections/send-correction.js';
export {
  settleCorrectionSend,
  settleStaleCorrectionSends,
  type CorrectionSettlement,
  type SettleCorrectionDeps,
} from './review/corrections/settle-correction-send.js';
export {
  transitionCorrection,
  type CorrectionTransitionInput,
  type CorrectionPatch,
} from './review/corrections/transition-correction.js';

// --- Review: the queues and locks shared by approvals, cases and corrections ---
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
} from './review/list-review-items.js';
export { lockReviewItem, type ReviewTable } from './review/lock-review-item.js';

// --- Outbox and jobs: the execute job, its one schema and builder, and the relay's republishing ---
export { enqueueExecution } from './outbox/enqueue-execution.js';
export {
  enqueueNextDispatch,
  type NextDispatch,
  type NextDispatchInput,
} from './outbox/enqueue-next-dispatch.js';
export {
  EXECUTE_TOPIC,
  executeJobSchema,
  executeJobId,
  executeDispatch,
  type ExecuteJob,
  type ExecuteDispatch,
} from './outbox/execute-job.js';
export {
  republishUnclaimedIntents,
  DEFAULT_UNCLAIMED_REPUBLISH_MS,
  DEFAULT_REPUBLISH_BATCH,
  REPUBLISH_CAUSE,
  type RepublishInput,
  type Republished,
} from './outbox/republish-unclaimed-intents.js';

// --- Database: connection, schema, migrations, channels, the compare-and-set helper, the database's clock ---
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
  stepSettledChannel,
  outboxChannel,
  unwindChannel,
  runChangedChannel,
  RUN_CHANGED_CHANNEL_SQL,
} from './db/channels.js';
export {
  createDb,
  pgConnectionConfig,
  SCHEMA_NAME,
  type SagaDb,
  type SagaTrx,
  type DbOptions,
  DEFAULT_PG_TIMEOUTS,
  GROUPED_STATEMENT_SETTINGS,
  type PgTimeouts,
} from './db/connect.js';
export { dbNowPlus, readDbNow, readDeadline, type DbDeadline } from './db/db-clock.js';
export { listenChannel, type ChannelListener, type ListenOptions } from './db/listen-channel.js';
export {
  openDedicatedSession,
  withServerKeepAlive,
  type DedicatedSession,
  type DedicatedSessionOptions,
} from './db/dedicated-session.js';
export {
  migrateToLatest,
  migrateListToLatest,
  currentSchemaVersion,
  assertSchemaVersion,
  CORE_MIGRATIONS,
  type MigrationList,
} from './db/migrate.js';
export { EXPECTED_SCHEMA_VERSION } from './db/migrations/index.js';
export { preparedAs } from './db/prepared-statements.js';
export type {
  Database,
  RunRow,
  StepRow,
  StepEventRow,
  OutboxRow,
  StoredCompensation,
  CompensationsTable,
  CompensationRow,
  CorrectionsTable,
  CorrectionRow,
  CasesTable,
  CaseRow,
  ApprovalsTable,
  ApprovalRow,
  RunPolicy,
} from './db/schema.js';
export { createStatementGroup, firstPerKey, type StatementGroup } from './db/statement-group.js';

// --- Auth: API tokens and their roles ---
export {
  createApiToken,
  issueApiToken,
  verifyApiToken,
  bearerTokenOf,
  hashToken,
  type IssuedApiToken,
  type NewApiToken,
  type Principal,
} from './auth/api-tokens.js';
export {
  listApiTokens,
  revokeApiToken,
  rotateApiToken,
  type ApiTokenListing,
} from './auth/manage-api-tokens.js';
export { recordTokenUse, TOKEN_USE_RESOLUTION_S } from './auth/record-token-use.js';
export { TokenRole } from './auth/token-role.js';
export { TokenScope } from './auth/token-scope.js';

// --- Metrics: the saga-log gauges and the effect metrics ---
export { duplicateEffectCounter, attemptsPerEffectHistogram } from './metrics/effect-metrics.js';
export { ATTEMPTS_PER_EFFECT_BUCKETS } from './metrics/metric-buckets.js';
export { createRoleRegistry } from './metrics/role-registry.js';
export { sharedRead, type SharedReadHooks } from './metrics/shared-read.js';
export { sagaLogGaugesConfig } from './metrics/saga-log-gauges-config.js';
export {
  registerSagaLogGauges,
  SagaLogGaugeGroup,
  DEFAULT_STUCK_RUN_MS,
  DEFAULT_STALE_OUTBOX_MS,
  type SagaLogGaugesOptions,
} from './metrics/saga-log-gauges.js';
export { literals as sqlLiterals } from './metrics/sql-literals.js';
export { registerDefinitionGauges, type DefinitionGaugesOptions } from './metrics/definition-gauges.js';
export {
  readDefinitionTotals,
  definitionLabeller,
  UNBOUND_DEFINITION_LABEL,
  OTHER_DEFINITION_LABEL,
  type DefinitionTotals,
} from './metrics/read-definition-gauges.js';

// --- Retention: pruning the outbox and the journal of final runs ---
export {
  pruneLog,
  PRUNABLE_RUN_STATUSES,
  DEFAULT_PRUNE_BATCH_SIZE,
  type PruneLogOptions,
  type PruneLogResult,
} from './retention/prune-log.js';
export { parseRetentionAge, retentionAgeSchema } from './retention/retention-age.js';

// --- Process: what every role needs to start, serve, drain and stop ---
export {
  bullmqConnection,
  bullmqWorkerConnection,
  bullmqProducerConnection,
  DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
} from './process/bullmq-connection.js';
export { closeWithin, CLOSE_TIMEOUT_MS } from './process/close-within.js';
export { closeWorkerWithin, createRunningWork, type RunningWork } from './process/close-worker-within.js';
export { baseConfigSchema, parseConfig, envInt, type BaseConfig } from './process/config.js';
export { CrashPoint, createCrashPoints } from './process/crash-point.js';
export { drainOnSignal, exitOnStartFailure } from './process/drain-on-signal.js';
export { ROLE_NODE_FLAGS } from './process/role-node-flags.js';
export { nodeArgsFor, rolesBundleDir, rolesCompiled } from './process/node-args-for.js';
export {
  runRole,
  GROUP_POOL_SIZE,
  type RoleSpec,
  type RoleContext,
  type RoleConfig,
  type StartedRole,
} from './process/run-role.js';
export { freePort } from './process/free-port.js';
export { newWorkerId } from './process/worker-id.js';
export {
  holdWorkerLiveness,
  leaseHolderGone,
  type WorkerLiveness,
  type WorkerLivenessOptions,
} from './process/worker-liveness.js';
export { createLogger, REDACT_PATHS, type Logger } from './process/logger.js';
export { lazyChildLogger } from './process/lazy-child-logger.js';
export { startMetricsServer, stopMetricsServer, type MetricsSource } from './process/metrics-server.js';
export { openSagaDb, sagaDbOptions, type SagaDbConfig } from './process/open-saga-db.js';
export {
  checkReadiness,
  probeDependency,
  postgresProbe,
  readinessDetail,
  READINESS_CHECK_TIMEOUT_MS,
  type Readiness,
  type ReadinessCheck,
  type ReadinessProbes,
} from './process/readiness.js';
export { withinMs } from './process/within-ms.js';

// --- Errors: one ErrorCode, each error classified by what the runtime must do ---
export { ErrorCode } from './errors/error-code.js';
export {
  SagaError,
  ClientError,
  OutcomeUnknownError,
  ToolDefinitionError,
  ToolNotRegisteredError,
  InvalidArgsError,
  StepLimitError,
  BadRequestError,
  FieldRefusal,
  type FieldIssue,
  InvalidTransitionError,
  StepConflictError,
  StepUnresolvedError,
  IdempotencyMismatchError,
  DuplicateOperationError,
  UnknownDefinitionError,
  PlanInvalidError,
  NotInDefinitionError,
  PlanMismatchError,
  BudgetExceededError,
  InvariantUnverifiedError,
  RunNotRunningError,
  NotFoundError,
  SchemaVersionMismatchError,
  ConfigError,
  InvalidRunTransitionError,
  ForbiddenError,
  PivotRequiredError,
  PivotStagedError,
  ApprovalHashMismatchError,
  PolicyVersionMismatchError,
  ApprovalDecidedError,
  ApprovalExpiredError,
  CaseActionError,
  CorrectionSendingError,
  InvalidCorrectionTransitionError,
  InvalidApprovalTransitionError,
  InvalidCaseTransitionError,
  WaitTimeoutError,
} from './errors/errors.js';

// --- Tracing: W3C trace context, stored with every step; OpenTelemetry spans when an exporter is set ---
export {
  parseTraceparent,
  formatTraceparent,
  newTraceContext,
  newSpanId,
  childTraceContext,
  type TraceContext,
} from './tracing/trace-context.js';
export { storedTrace, traceIdHex, type StoredTraceColumns } from './tracing/stored-trace.js';
export { startTraceSpan, type TraceSpan, type TraceSpanKind } from './tracing/trace-span.js';
export { startTracing, type Tracing } from './tracing/start-tracing.js';
export { tracingConfigSchema, loadTracingConfig, type TracingConfig } from './tracing/tracing-config.js';

// --- Utilities ---
export { canonicalJson, correctionHash, payloadHash } from './util/canonical-json.js';
export { equalJitterBackoffMs } from './util/equal-jitter-backoff.js';
export { valuesOf } from './util/values-of.js';
