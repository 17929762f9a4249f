import { ClientError, classifyToolError, StepStatus } from '@agent-saga/core';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import {
  classifyStripeError,
  StripeOutcomeUnknownError,
  VendorIdempotencyMismatchError,
} from '../src/index.js';
import { silentLogger } from './stripe-test-kit.js';

/** A Stripe error as the client builds it from an answer's status and error body. */
const stripeError = (statusCode: number, type: Stripe.RawErrorType, code?: string) =>
  Stripe.errors.StripeError.generate({
    statusCode,
    type,
    message: `${type} ${code ?? ''}`,
    ...(code ? { code } : {}),
  });

const outcome = (err: unknown) => classifyToolError(classifyStripeError(err, silentLogger));

describe('classifyStripeError', () => {
  it('definitive refusals (400, 402, 404) are ClientError with status and vendor code: FAILED', () => {
    for (const [status, type, code] of [
      [402, 'card_error', 'card_declined'],
      [400, 'invalid_request_error', 'amount_too_large'],
      [404, 'invalid_request_error', 'resource_missing'],
    ] as const) {
      const err = classifyStripeError(stripeError(status, type, code), silentLogger);
      expect(err).toBeInstanceOf(ClientError);
      expect((err as ClientError).details).toMatchObject({ status, vendorCode: code });
      expect(classifyToolError(err)).toMatchObject({
        status: StepStatus.FAILED,
        error: { status, vendorCode: code },
      });
    }
  });

  it('401 and 403 are ClientError: nothing happened', () => {
    expect(classifyStripeError(stripeError(401, 'invalid_request_error'), silentLogger)).toBeInstanceOf(
      ClientError,
    );
    expect(classifyStripeError(stripeError(403, 'invalid_request_error'), silentLogger)).toBeInstanceOf(
      ClientError,
    );
  });

  it('idempotency_error is VENDOR_IDEMPOTENCY_MISMATCH: not a ClientError, UNKNOWN', () => {
    const err = classifyStripeError(stripeError(400, 'idempotency_error'), silentLogger);
    expect(err).toBeInstanceOf(VendorIdempotencyMismatchError);
    expect(err).not.toBeInstanceOf(ClientError);
    expect(err.code).toBe('VENDOR_IDEMPOTENCY_MISMATCH');
    expect(classifyToolError(err)).toMatchObject({
      status: StepStatus.UNKNOWN,
      error: { code: 'VENDOR_IDEMPOTENCY_MISMATCH', status: 400 },
    });
  });

  it('409 in flight, 429, 5xx, connection errors and unreadable bodies are UNKNOWN, keeping the status', () => {
    expect(outcome(stripeError(409, 'invalid_request_error', 'idempotency_key_in_use'))).toMatchObject({
      status: StepStatus.UNKNOWN,
      error: { code: 'OUTCOME_UNKNOWN', status: 409, vendorCode: 'idempotency_key_in_use' },
    });
    expect(outcome(stripeError(429, 'invalid_request_error', 'rate_limit')).status).toBe(StepStatus.UNKNOWN);
    expect(outcome(stripeError(500, 'api_error'))).toMatchObject({
      status: StepStatus.UNKNOWN,
      error: { status: 500 },
    });
    const invalidJson = new Stripe.errors.StripeAPIError({
      message: 'Invalid JSON received from the Stripe API',
    });
    expect(classifyStripeError(invalidJson, silentLogger)).toBeInstanceOf(StripeOutcomeUnknownError);
    const reset = new Stripe.errors.StripeConnectionError({ message: 'socket hang up' });
    expect(outcome(reset).status).toBe(StepStatus.UNKNOWN);
    expect(outcome(new TypeError('boom')).status).toBe(StepStatus.UNKNOWN);
  });

  it('an error the connector raised itself passes through', () => {
    const own = new ClientError('no default payment method', { vendorCode: 'no_default_payment_method' });
    expect(classifyStripeError(own, silentLogger)).toBe(own);
  });
});
