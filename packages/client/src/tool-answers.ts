/**
 * What a model reads as the result of a tool call made through agent-saga, for any agent framework: the
 * framework adapters (`@agent-saga/ai-sdk`, `@agent-saga/openai-agents`) wrap these in their own tool
 * types, so the words a model reads after a lost answer or a refusal are written once, here.
 */
import { CallStatus, type CallOutcome } from './call-outcome.js';
import {
  NotFoundError,
  SagaApiError,
  ServiceUnavailableError,
  ToolOutcomeUnknown,
  UnauthorizedError,
  UnexpectedResponseError,
} from './errors.js';
/**
 * What the model reads as a tool's result. Every answer of the harness that the model can act on is a
 * result, never a thrown error: an error would reach the model as the framework's tool error, whose text
 * is whatever the exception said, and it would not tell the model the one thing that matters after a lost
 * answer (repeat the same call; it will not act twice).
 *
 * `status` is the harness's own word (CONFIRMED, UNKNOWN, …, or REFUSED for a refusal); `message` is
 * written for the model; `whatToDo` says the next move when there is one.
 */
export type SagaToolResult =
  | {
      readonly status: typeof CallStatus.CONFIRMED;
      readonly stepIdx: number;
      /** The effect's id in the real system (the charge, the ticket), when the tool gives one. */
      readonly externalRef: string | null;
      readonly result: unknown;
      /** True when this is the outcome of an earlier attempt of the same step (a retry, a lost answer). */
      readonly replayed: boolean;
    }
  | {
      readonly status: typeof CallStatus.UNKNOWN | typeof CallStatus.INTENDED;
      readonly stepIdx: number;
      readonly message: string;
      readonly whatToDo: string;
    }
  | {
      readonly status: typeof CallStatus.AWAITING_APPROVAL;
      readonly stepIdx: number;
      readonly message: string;
      readonly whatToDo: string;
    }
  | {
      readonly status: typeof CallStatus.FAILED;
      readonly stepIdx: number;
      readonly message: string;
      /** What the real system said (shape is the tool's). */
      readonly error: unknown;
    }
  | {
      readonly status: typeof CallStatus.REJECTED;
      readonly stepIdx: number;
      readonly message: string;
    }
  | RefusalResult;

/** The harness refused the call (or could not be reached); see `errorResult`. */
export interface RefusalResult {
  readonly status: 'REFUSED' | 'UNAVAILABLE';
  /** The dispatcher's stable code (DUPLICATE_OPERATION, BUDGET_EXCEEDED, …), passed through as sent. */
  readonly code: string;
  readonly message: string;
  /** The argument or limit the refusal is about (`args.orderId`, `budget.maxSteps`). */
  readonly field?: string;
  /** The identity arguments that differ (IDEMPOTENCY_MISMATCH, PLAN_MISMATCH). */
  readonly fields?: readonly string[];
  /** Everything else the dispatcher said (the earlier step of a duplicate, a budget's limit and use). */
  readonly details?: Readonly<Record<string, unknown>>;
  readonly whatToDo: string;
}

/**
 * Why this wording: it is what the harness knows, said so that a model does the safe thing. The outcome is
 * neither success nor failure; the harness asks the real system by the step's idempotency key; the same
 * call again lands on the same step and key, so it returns the resolved outcome and cannot act twice; new
 * arguments or another tool would be a new operation.
 */
export const UNKNOWN_WHAT_TO_DO =
  'The outcome is not known yet: the call may or may not have taken effect. agent-saga is finding out by ' +
  'asking the real system with the same idempotency key. Call this tool again with the same arguments to ' +
  'get the resolved outcome: a repeat lands on the same step and key, so it never acts twice. Do not ' +
  'change the arguments or reach the same goal another way meanwhile.';

const INTENDED_MESSAGE =
  'The call is recorded and under way, but it had not finished when the harness answered.';

const AWAITING_MESSAGE =
  'The call is held for a person: an operator decides it in agent-saga. Nothing has been sent yet.';

const AWAITING_WHAT_TO_DO =
  'Wait for the decision. Calling this tool again with the same arguments returns the outcome once it is ' +
  'decided (and never acts twice); an approval in the chat does not release it.';

/** The result the model reads for an outcome the dispatcher answered with. */
export function outcomeResult(outcome: CallOutcome): unknown {
  switch (outcome.status) {
    case CallStatus.PURE:
      return outcome.result;
    case CallStatus.CONFIRMED:
      return {
        status: outcome.status,
        stepIdx: outcome.stepIdx,
        externalRef: outcome.externalRef,
        result: outcome.result,
        replayed: outcome.replayed,
      } satisfies SagaToolResult;
    case CallStatus.FAILED:
      return {
        status: outcome.status,
        stepIdx: outcome.stepIdx,
        message: 'The real system refused the call; nothing happened.',
        error: outcome.error,
      } satisfies SagaToolResult;
    case CallStatus.REJECTED:
      return {
        status: outcome.status,
        stepIdx: outcome.stepIdx,
        message: outcome.message,
      } satisfies SagaToolResult;
    case CallStatus.INTENDED:
      return {
        status: outcome.status,
        stepIdx: outcome.stepIdx,
        message: INTENDED_MESSAGE,
        whatToDo: UNKNOWN_WHAT_TO_DO,
      } satisfies SagaToolResult;
    case CallStatus.AWAITING_APPROVAL:
      return {
        status: outcome.status,
        stepIdx: outcome.stepIdx,
        message: AWAITING_MESSAGE,
        whatToDo: AWAITING_WHAT_TO_DO,
      } satisfies SagaToolResult;
    default: {
      const never: never = outcome;
      return never;
    }
  }
}

/** The result for a `ToolOutcomeUnknown`: the harness's own message, and what to do. */
export function unknownResult(stepIdx: number, message: string): SagaToolResult {
  return { status: CallStatus.UNKNOWN, stepIdx, message, whatToDo: UNKNOWN_WHAT_TO_DO };
}

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

/** True when the arguments are a JSON object; the harness validates the rest (INVALID_ARGS naming the field). */
export function isToolArgs(input: unknown): input is Readonly<Record<string, unknown>> {
  return typeof input === 'object' && input !== null && !Array.isArray(input);
}

/**
 * What the model reads when its arguments are not a JSON object at all, so nothing went to the harness:
 * shaped as the harness's own INVALID_ARGS refusal.
 */
export const NOT_AN_OBJECT_RESULT: RefusalResult = {
  status: 'REFUSED',
  code: 'INVALID_ARGS',
  message: 'The arguments must be a JSON object with the fields of the tool’s input schema.',
  field: 'args',
  whatToDo: 'Call the tool again with its arguments as one JSON object.',
};
