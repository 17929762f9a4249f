/**
 * The answers `toHttpError` gives the errors the API tests do not reach through a route (each error class
 * carries its status and fields; this pins the wire format `@agent-saga/client` reads).
 */
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  ClientError,
  InvalidTransitionError,
  OutcomeUnknownError,
  ToolNotRegisteredError,
  type CorrectionRow,
} from '@agent-saga/core';
import { toHttpError } from '../src/api/http-errors.js';
import { PureToolError } from '../src/api/run-pure-tool.js';
import { CorrectionOutcomeUnknownError, CorrectionRefusedError } from '../src/api/send-correction.js';
import { ClaimFailedError } from '../src/executor/claim-failed-error.js';

const correction = { id: 42 } as unknown as CorrectionRow;

describe('toHttpError', () => {
  it.each([
    [
      new ClientError('declined', { status: 402, vendorCode: 'card_declined' }),
      422,
      { code: 'CLIENT_ERROR', message: 'declined', details: { status: 402, vendorCode: 'card_declined' } },
    ],
    [
      new PureToolError('pure tool lookup_order failed: reset'),
      502,
      { code: 'TOOL_ERROR', message: 'pure tool lookup_order failed: reset' },
    ],
    [
      new CorrectionRefusedError('refused', correction),
      422,
      { code: 'CORRECTION_REFUSED', message: 'refused', correctionId: '42' },
    ],
    [
      new CorrectionOutcomeUnknownError('unknown', correction),
      502,
      { code: 'CORRECTION_OUTCOME_UNKNOWN', message: 'unknown', correctionId: '42' },
    ],
    [
      new ToolNotRegisteredError('nope'),
      400,
      { code: 'UNKNOWN_TOOL', message: 'tool "nope" is not registered', field: 'tool', tool: 'nope' },
    ],
    [
      new BadRequestError('stepIdx', 'stepIdx: too big'),
      400,
      { code: 'BAD_REQUEST', message: 'stepIdx: too big', field: 'stepIdx', issues: [] },
    ],
  ] as const)('answers %s with its status and fields', (err, status, error) => {
    const mapped = toHttpError(err);
    expect(mapped).toMatchObject({ status, internal: false });
    expect(mapped.body.error).toEqual(error);
  });

  it('hides a harness failure behind 500 INTERNAL, as it does anything unknown', () => {
    for (const err of [
      new InvalidTransitionError('run-1', 0, 'CONFIRMED', 'FAILED'),
      new OutcomeUnknownError('the database said: relation saga_log …'),
      new ClaimFailedError('k', new Error('reset')),
      new TypeError('x is undefined'),
    ])
      expect(toHttpError(err)).toEqual({
        status: 500,
        body: { error: { code: 'INTERNAL', message: 'internal error; the request may be retried' } },
        internal: true,
      });
  });
});
