import {
  callIntake as coreCallIntake,
  type IntakeOutcome,
  type IntakeRequest,
  type SagaTrx,
} from '@agent-saga/core';
import { settledOutcome } from './call-outcome.js';

export type { IntakeOutcome, IntakeRequest } from '@agent-saga/core';

/**
 * The intake transaction of `POST /v1/runs/{runId}/calls`: core's `callIntake` (the one home of its rules,
 * shared with `recordCallerIntent`), with a STEP_UNRESOLVED refusal carrying the settled outcome as this
 * API answers a call (`settledOutcome`).
 */
export function callIntake(trx: SagaTrx, req: IntakeRequest): Promise<IntakeOutcome> {
  return coreCallIntake(trx, { ...req, presentOutcome: settledOutcome });
}
