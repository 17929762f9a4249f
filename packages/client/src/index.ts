// The public surface of @agent-saga/client. Named exports only: what is not here is internal.
export {
  createSagaClient,
  MAX_WAIT_MS,
  type SagaClient,
  type SagaClientOptions,
  type CreateRunInput,
  type CreatedRun,
  type CallOptions,
  type RunStatusAnswer,
} from './create-saga-client.js';
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
  type RunView,
  type StepView,
  type StepEvent,
} from './run-view.js';
export {
  ApiErrorCode,
  LocalErrorCode,
  SagaApiError,
  InvalidRequestError,
  UnauthorizedError,
  NotFoundError,
  ConflictError,
  ServiceUnavailableError,
  UnexpectedResponseError,
  ToolOutcomeUnknown,
  type ApiErrorInit,
} from './errors.js';
