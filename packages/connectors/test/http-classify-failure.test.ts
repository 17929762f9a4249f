import { ClientError, classifyToolError, OutcomeUnknownError, StepStatus } from '@agent-saga/core';
import { describe, expect, it } from 'vitest';
import { classifyHttpFailure, VendorIdempotencyMismatchError } from '../src/index.js';

const response = (status: number, body: unknown) =>
  classifyHttpFailure({ kind: 'response', vendor: 'v', status, body });

describe('classifyHttpFailure', () => {
  it.each([
    [400, { errorMessages: [], errors: { project: 'valid project is required' } }, 'jira_field:project'],
    [400, { errorMessages: ['Error in the JQL Query'], errors: {} }, 'jira_error'],
    [401, { error: { code: 'unauthorized', message: 'no' } }, 'unauthorized'],
    [403, { statusCode: 403, name: 'invalid_api_key', message: 'API key is invalid' }, 'invalid_api_key'],
    [404, { error: { code: 'not_found', message: 'No order' } }, 'not_found'],
    [422, { statusCode: 422, name: 'validation_error', message: 'bad tag' }, 'validation_error'],
    [422, { error: { code: 'order_not_eligible', message: 'not eligible' } }, 'order_not_eligible'],
  ])('a definitive %i with a JSON error body is a ClientError (FAILED)', (status, body, vendorCode) => {
    const err = response(status, body);
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).details).toMatchObject({ status, vendorCode });
    expect(classifyToolError(err).status).toBe(StepStatus.FAILED);
  });

  it.each([
    [409, { error: { code: 'idempotency_key_in_use' } }],
    [409, { statusCode: 409, name: 'concurrent_idempotent_requests', message: '' }],
    [408, { message: 'timeout' }],
    [429, { statusCode: 429, name: 'rate_limit_exceeded', message: 'slow down' }],
    [500, { error: { code: 'internal_error' } }],
    [502, undefined],
    [504, undefined],
    // A 4xx without a JSON body came from something in between, not from the vendor's validation.
    [400, undefined],
    [404, undefined],
  ])('%i is unknown, keeping its status', (status, body) => {
    const err = response(status, body);
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(classifyToolError(err)).toMatchObject({ status: StepStatus.UNKNOWN, error: { status } });
  });

  it.each([
    [{ error: { code: 'idempotency_key_mismatch' } }, 'idempotency_key_mismatch'],
    [{ statusCode: 409, name: 'invalid_idempotent_request', message: '' }, 'invalid_idempotent_request'],
  ])('409 "same key, other body" is VENDOR_IDEMPOTENCY_MISMATCH', (body, vendorCode) => {
    const err = response(409, body);
    expect(err).toBeInstanceOf(VendorIdempotencyMismatchError);
    expect(classifyToolError(err)).toMatchObject({
      status: StepStatus.UNKNOWN,
      error: { code: 'VENDOR_IDEMPOTENCY_MISMATCH', status: 409, vendorCode },
    });
  });

  it('transport failures are unknown: resets keep the socket code, aborts and timeouts say so', () => {
    const reset = new TypeError('fetch failed', {
      cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
    });
    expect(classifyHttpFailure({ kind: 'transport', vendor: 'v', error: reset })).toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      vendorCode: 'UND_ERR_SOCKET',
    });
    const econnreset = new TypeError('fetch failed', {
      cause: Object.assign(new Error('read'), { code: 'ECONNRESET' }),
    });
    expect(classifyHttpFailure({ kind: 'transport', vendor: 'v', error: econnreset })).toMatchObject({
      vendorCode: 'ECONNRESET',
    });
    const abort = new DOMException('aborted', 'AbortError');
    expect(classifyHttpFailure({ kind: 'transport', vendor: 'v', error: abort })).toMatchObject({
      vendorCode: 'aborted',
    });
    const timeout = new DOMException('timed out', 'TimeoutError');
    const err = classifyHttpFailure({ kind: 'transport', vendor: 'v', error: timeout });
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err).toMatchObject({ vendorCode: 'timeout' });
  });
});
