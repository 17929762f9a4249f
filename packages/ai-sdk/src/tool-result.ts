import { CallStatus, type CallOutcome } from '@agent-saga/client';

/**
 * What the model reads as a tool's result. Every answer of the harness that the model can act on is a
 * result, never a thrown error: an error would reach the model as the SDK's `tool-error`, whose text is
 * whatever the exception said, and it would not tell the model the one thing that matters after a lost
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

/** The harness refused the call (or could not be reached); see `refusal-result.ts`. */
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
