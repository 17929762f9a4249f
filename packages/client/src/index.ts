// The public surface of @agent-saga/client. Named exports only: what is not here is internal.
export {
  createSagaClient,
  type SagaClient,
  type SagaClientOptions,
  type CreateRunInput,
  type CreatedRun,
  type RunStatusAnswer,
  type ListRunsQuery,
  type CommitStep,
  type PivotInput,
} from './create-saga-client.js';
export type {
  ReviewMethods,
  ReviewQuery,
  DecisionInput,
  CaseResolutionInput,
  CorrectionSendInput,
  CorrectionEditInput,
  CorrectionDismissInput,
} from './review-methods.js';
export { MAX_WAIT_MS, type CallOptions, type StepMethods } from './step-methods.js';
export { createRunHandle, OPEN_LOG_STATUSES, type RunHandle, type OpenStep } from './run-handle.js';
export {
  CallStatus,
  isSettled,
  SETTLED_CALL_STATUSES,
  callResponseSchema,
  unseenOutcomeSchema,
  type CallOutcome,
  type CallResponse,
  type SettledOutcome,
  type UnseenOutcome,
} from './call-outcome.js';
export {
  runViewSchema,
  stepViewSchema,
  stepEventSchema,
  runPolicySchema,
  runSummarySchema,
  type RunView,
  type StepView,
  type StepEvent,
  type RunPolicy,
  type RunSummary,
} from './run-view.js';
export {
  definitionViewSchema,
  definitionStepSchema,
  definitionListSchema,
  type DefinitionView,
  type DefinitionStep,
} from './definition-view.js';
export { toolViewSchema, toolListSchema, type ToolView } from './tool-view.js';
export {
  approvalViewSchema,
  approvalEvidenceSchema,
  proposedStepSchema,
  stagedEffectSchema,
  pivotProposalSchema,
  caseViewSchema,
  correctionViewSchema,
  type ApprovalView,
  type ApprovalEvidence,
  type ProposedStep,
  type StagedEffect,
  type PivotProposal,
  type CaseView,
  type CorrectionView,
} from './review-views.js';
export {
  RunStatus,
  ApprovalKind,
  ApprovalStatus,
  Decision,
  CaseStatus,
  CaseAction,
  CorrectionStatus,
} from './statuses.js';
export {
  ApiErrorCode,
  LocalErrorCode,
  SagaApiError,
  InvalidRequestError,
  UnauthorizedError,
  ForbiddenError,
  NotFoundError,
  ConflictError,
  ApprovalHashMismatchError,
  ApprovalDecidedError,
  RunNotRunningError,
  DuplicateOperationError,
  ApprovalExpiredError,
  CaseActionRefusedError,
  PivotRequiredError,
  CorrectionRefusedError,
  CorrectionOutcomeUnknownError,
  CorrectionSendingError,
  ServiceUnavailableError,
  UnexpectedResponseError,
  ToolOutcomeUnknown,
  type ApiErrorInit,
} from './errors.js';
