import {
  NotFoundError,
  SagaApiError,
  ServiceUnavailableError,
  ToolOutcomeUnknown,
  UnauthorizedError,
  UnexpectedResponseError,
} from '@agent-saga/client';
import { unknownResult, type RefusalResult, type SagaToolResult } from './tool-result.js';

/**
 * What to do after a refusal, by the dispatcher's code. A code missing here still reaches the model, with
 * its message, field and details, and the generic advice below: refusals are mapped by their wire `code`,
 * not by the client's error classes, so a code the dispatcher adds later needs no change here.
 */
const WHAT_TO_DO: Readonly<Record<string, string>> = {
  DUPLICATE_OPERATION:
    'This repeats an earlier step of the run (details.stepIdx) that did this already or is doing it. Use ' +
    "that step's outcome (details.externalRef when it is CONFIRMED) instead; do not do it again, in any " +
    'words. To learn an open step’s outcome, call the tool again with that step’s original arguments.',
  STEP_UNRESOLVED:
    'An earlier step of the run has no settled outcome yet. Call that tool again with its original ' +
    'arguments to learn it first (details.outcome holds it when the harness already knows).',
  IDEMPOTENCY_MISMATCH:
    'This tool has an open step whose outcome is not known, with other identity arguments (fields). ' +
    'Call it again with the original arguments to learn that outcome; an open intent cannot be changed.',
  STEP_CONFLICT: 'Another call took this step at the same time. Call the tool again.',
  INVALID_ARGS: 'Fix the argument named in `field` as the message says, then call again.',
  BAD_REQUEST: 'Fix the request as the message says, then call again.',
  UNKNOWN_TOOL: 'No such tool is registered: use one of the tools you were given.',
  BUDGET_EXCEEDED:
    'The run’s budget (field: the limit; details: what it allows and what is used) does not allow this ' +
    'call, and will not. Do not retry it or work around it: finish with what is done, or tell the user.',
  NOT_IN_DEFINITION:
    'The saga this run follows does not allow this tool here (or has no such step left). Choose a step ' +
    'its definition allows, or tell the user.',
  PLAN_MISMATCH:
    'The call differs from the run’s plan in identity arguments (field, fields; details.planEntry). Call ' +
    'it as planned.',
  PLAN_INVALID: 'The plan does not fit the run’s definition (field names the entry). Fix the plan.',
  RUN_NOT_RUNNING:
    'The run takes no new calls (it is unwinding, waiting for a person, or ended). Stop calling tools.',
  PIVOT_REQUIRED:
    'This run commits irreversible steps only through a pivot proposal approved by a person, not one by one.',
  PIVOT_STAGED: 'The run’s pivot is approved and rolls forward by itself: make no new calls.',
  CLIENT_ERROR: 'The tool refused the arguments as the message says; nothing happened. Fix them or stop.',
};

const GENERIC_WHAT_TO_DO =
  'agent-saga refused the call and wrote nothing. Read the message; repeating the call unchanged gets ' +
  'the same answer.';

const UNAVAILABLE_WHAT_TO_DO =
  'agent-saga could not be reached, so the call may or may not have been recorded. Call this tool again ' +
  'with the same arguments: a repeat lands on the same step and key, so it never acts twice.';

/**
 * Turns what `run.call` threw into the model's result. Thrown on instead: errors about the app, not the
 * call (a bad token, a missing run: the model cannot fix them) and anything that is not the client's.
 */
export function errorResult(err: unknown): SagaToolResult {
  if (err instanceof ToolOutcomeUnknown) return unknownResult(err.stepIdx, err.message);
  if (!(err instanceof SagaApiError)) throw err;
  if (err instanceof UnauthorizedError || err instanceof NotFoundError) throw err;
  if (err instanceof ServiceUnavailableError || err instanceof UnexpectedResponseError)
    return { status: 'UNAVAILABLE', code: err.code, message: err.message, whatToDo: UNAVAILABLE_WHAT_TO_DO };
  return refusalResult(err);
}

function refusalResult(err: SagaApiError): RefusalResult {
  const details: Record<string, unknown> = { ...err.details };
  if (err.outcome) details.outcome = err.outcome;
  return {
    status: 'REFUSED',
    code: err.code,
    message: err.message,
    ...(err.field === undefined ? {} : { field: err.field }),
    ...(err.fields === undefined ? {} : { fields: err.fields }),
    ...(Object.keys(details).length === 0 ? {} : { details }),
    whatToDo: Object.hasOwn(WHAT_TO_DO, err.code) ? WHAT_TO_DO[err.code]! : GENERIC_WHAT_TO_DO,
  };
}
