/**
 * When a refusal found under the key is believed at once (`answeredUnderKey`): only for a vendor that
 * dedupes by key (it saves its answer under the key), only after an answered 500 (a 502, 503 or 504 may
 * come from a gateway while the backend still works; a 409 says an earlier send is in flight; a 429 has
 * its own rule), and only when the stored error says it answered the step's last attempt. Pure.
 */
import { describe, expect, it } from 'vitest';
import {
  answeredUnderKey,
  ClientError,
  isRefusedUnderKey,
  refusalOf,
  type RefusedUnderKey,
} from '@agent-saga/core';

const deduping = { dedupesByKey: true };

describe('answeredUnderKey', () => {
  it('is true for an answered 500 to the last attempt of a tool whose vendor dedupes by key', () => {
    expect(answeredUnderKey(deduping, { attempts: 2, error: { status: 500, attempt: 2 } })).toBe(true);
    expect(
      answeredUnderKey(deduping, { attempts: 1, error: { code: 'UPSTREAM_5XX', status: 500, attempt: 1 } }),
    ).toBe(true);
  });

  it('is false for a tool whose vendor does not dedupe by key, even after an answered 500', () => {
    const step = { attempts: 2, error: { status: 500, attempt: 2 } };
    expect(answeredUnderKey({ dedupesByKey: false }, step)).toBe(false);
  });

  it.each([502, 503, 504, 409, 429])('is false for an answered %i', (status) => {
    expect(answeredUnderKey(deduping, { attempts: 2, error: { status, attempt: 2 } })).toBe(false);
  });

  it('is false when the stored error carries no status (a timeout, a reset: nothing answered)', () => {
    expect(answeredUnderKey(deduping, { attempts: 2, error: { code: 'TIMEOUT', attempt: 2 } })).toBe(false);
    expect(answeredUnderKey(deduping, { attempts: 2, error: null })).toBe(false);
    expect(answeredUnderKey(deduping, undefined)).toBe(false);
  });

  it('is false when the 500 answered an older attempt than the last, or does not say which', () => {
    expect(answeredUnderKey(deduping, { attempts: 2, error: { status: 500, attempt: 1 } })).toBe(false);
    expect(answeredUnderKey(deduping, { attempts: 2, error: { status: 500 } })).toBe(false);
    expect(answeredUnderKey(deduping, { attempts: 2, error: { status: 500, attempt: '2' } })).toBe(false);
  });
});

describe('a refusal from a tool module with its own copy of core', () => {
  it('is read as a refusal, never as an effect found, and carries its message and details', () => {
    // A ClientError of another class (a bundled core): an Error with the code, as `SagaError` sets it.
    class OtherClientError extends Error {
      readonly code = 'CLIENT_ERROR';
      constructor(
        message: string,
        readonly details: Record<string, unknown>,
      ) {
        super(message);
      }
    }
    const answer = { refused: new OtherClientError('left incomplete', { vendorCode: 'x_incomplete' }) };
    expect(isRefusedUnderKey(answer)).toBe(true);
    const refusal = refusalOf(answer as unknown as RefusedUnderKey);
    expect(refusal).toBeInstanceOf(ClientError);
    expect(refusal).toMatchObject({ message: 'left incomplete', details: { vendorCode: 'x_incomplete' } });
    // An effect, or an object with some other `refused` field, is not a refusal.
    expect(isRefusedUnderKey({ externalRef: 'x', result: {} })).toBe(false);
    expect(isRefusedUnderKey({ refused: 'no' })).toBe(false);
    expect(isRefusedUnderKey({ refused: new Error('plain') })).toBe(false);
  });
});
