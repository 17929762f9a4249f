import { StepStatus, type StepRow } from '@agent-saga/core';
import type { CallAnswerBody } from './schemas.js';

/**
 * The message a model reads when the outcome of its call is unknown. It must stop the two things a model
 * tends to do next: retry with reworded arguments, or reach the same goal another way (a second effect).
 */
export const UNKNOWN_OUTCOME_MESSAGE =
  'The outcome of this call is not known yet: it may or may not have taken effect. Do not call this tool ' +
  'again with new arguments and do not try another way to achieve the same thing; the harness will find ' +
  'out whether it happened and resolve this step. Repeating this exact call later (same step) returns the ' +
  'resolved outcome.';

/** Statuses in which a step is still on its way: a response waits for them to settle. */
export const IN_FLIGHT_STATUSES: readonly StepStatus[] = [StepStatus.INTENDED, StepStatus.NOT_EXECUTED];

export function isInFlight(status: StepStatus): boolean {
  return IN_FLIGHT_STATUSES.includes(status);
}

/**
 * What a retry of an UNKNOWN step waits through: in flight, or still unknown after its inline lookup. Why it
 * waits (up to `waitMs`, as a new call does) rather than answering UNKNOWN at once: the reconciler resolves
 * the step by key, and its NOTIFY then answers the waiting call, where an agent told "unknown" at once asks
 * again a few hundred milliseconds later, each time with a lookup at the vendor and two events written
 * (measured: eager agents retried an unknown Jira create some 3 times a second for its 14 s horizon).
 */
export function isUnresolved(status: StepStatus): boolean {
  return isInFlight(status) || status === StepStatus.UNKNOWN;
}

export interface CallAnswer {
  readonly statusCode: 200 | 202;
  readonly body: CallAnswerBody;
}

/**
 * The answer to a call from the step's row. `replayed` is true whenever the outcome comes from the log
 * rather than from the execution this very call dispatched. A step not yet settled answers 202.
 */
export function presentCallOutcome(step: StepRow, replayed: boolean): CallAnswer {
  const id = { stepIdx: step.step_idx, idempotencyKey: step.idempotency_key };
  switch (step.status) {
    case StepStatus.CONFIRMED:
      return {
        statusCode: 200,
        body: { status: step.status, ...id, externalRef: step.external_ref, result: step.result, replayed },
      };
    case StepStatus.FAILED:
      return {
        statusCode: 200,
        body: { status: step.status, ...id, error: step.error ?? { message: 'failed' }, replayed },
      };
    case StepStatus.UNKNOWN:
      return { statusCode: 200, body: { status: step.status, ...id, message: UNKNOWN_OUTCOME_MESSAGE } };
    case StepStatus.MANUAL_INTERVENTION:
      // To the caller this is still an unknown outcome, which a person (not the model) will settle.
      return {
        statusCode: 200,
        body: {
          status: StepStatus.UNKNOWN,
          ...id,
          message: `A person is resolving the outcome of this call. ${UNKNOWN_OUTCOME_MESSAGE}`,
        },
      };
    case StepStatus.REJECTED:
      return {
        statusCode: 200,
        body: {
          status: step.status,
          ...id,
          message: 'A person refused this call; it was not executed. Do not try to achieve it another way.',
        },
      };
    case StepStatus.AWAITING_APPROVAL:
      return { statusCode: 202, body: { status: step.status, ...id } };
    case StepStatus.INTENDED:
    case StepStatus.NOT_EXECUTED:
      // NOT_EXECUTED is on its way back to INTENDED (a re-dispatch): for the caller it is still running.
      return { statusCode: 202, body: { status: StepStatus.INTENDED, ...id } };
    default: {
      const never: never = step.status;
      throw new Error(`unhandled step status ${String(never)}`);
    }
  }
}

/** The outcome a STEP_UNRESOLVED refusal carries for a settled step the caller had not seen. */
export function settledOutcome(step: StepRow): Record<string, unknown> {
  return { ...presentCallOutcome(step, true).body, tool: step.tool };
}
