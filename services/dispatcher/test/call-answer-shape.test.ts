/**
 * The call route writes its 200/202 answers without checking them against `callAnswerBody` at run time
 * (routes/calls.ts): what `presentCallOutcome` builds must therefore be that schema exactly, for every
 * status a step can be answered in: nothing the schema would strip, nothing it would refuse.
 */
import { describe, expect, it } from 'vitest';
import { StepStatus, type StepRow } from '@agent-saga/core';
import { presentCallOutcome } from '../src/api/call-outcome.js';
import { callAnswerBody } from '../src/api/schemas.js';

const row = (status: StepStatus, over: Partial<StepRow> = {}): StepRow =>
  ({
    run_id: 'run-1',
    step_idx: 3,
    idempotency_key: 'run-1:3:charge',
    status,
    external_ref: 'ch_1',
    result: { amount: 5 },
    error: { code: 'card_declined', message: 'declined' },
    outcome_delivered: false,
    ...over,
  }) as StepRow;

describe('presentCallOutcome: every answer is callAnswerBody as written', () => {
  for (const status of Object.values(StepStatus)) {
    it(`${status}`, () => {
      const answer = presentCallOutcome(row(status), status === StepStatus.CONFIRMED);
      const parsed = callAnswerBody.safeParse(answer.body);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      // The parse strips keys the schema does not name: none may be there to strip.
      expect(parsed.data).toEqual(answer.body);
      expect(JSON.parse(JSON.stringify(answer.body))).toEqual(JSON.parse(JSON.stringify(parsed.data)));
    });
  }

  it('a FAILED step stored without an error still answers an error object', () => {
    const body = presentCallOutcome(row(StepStatus.FAILED, { error: null }), false).body;
    expect(callAnswerBody.safeParse(body).success).toBe(true);
  });
});
