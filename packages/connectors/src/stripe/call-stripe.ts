import type { LookupContext } from '@agent-saga/core';
import type Stripe from 'stripe';
import { classifyStripeError } from './classify-stripe-error.js';
import type { StripeConfig } from './stripe-config.js';
import { StripeOutcomeUnknownError } from './stripe-errors.js';

/** What every Stripe call needs from the tool's context: the abort signal and the logger. */
export type CallContext = Pick<LookupContext, 'signal' | 'logger'>;

/**
 * Runs one Stripe request and classifies what it throws ({@link classifyStripeError}).
 *
 * The official client takes no `AbortSignal`, so an abort cannot cancel the request on the wire: when the
 * signal fires we stop waiting and report UNKNOWN at once; the request may still complete at Stripe, which is
 * exactly what UNKNOWN means, and the key makes any later attempt a replay. The client's own `timeout`
 * bounds the request either way.
 */
export async function callStripe<T>(ctx: CallContext, request: () => Promise<T>): Promise<T> {
  if (ctx.signal.aborted) {
    throw new StripeOutcomeUnknownError('aborted before the Stripe call', {}, { cause: ctx.signal.reason });
  }
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () =>
      reject(
        new StripeOutcomeUnknownError(
          'Stripe call aborted before its answer arrived',
          {},
          { cause: ctx.signal.reason },
        ),
      );
    ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([request(), aborted]);
  } catch (err) {
    throw classifyStripeError(err, ctx.logger);
  } finally {
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Options for a POST: the harness's key as Stripe's `Idempotency-Key` (overriding the one the client would
 * generate), and the configured timeout. Every POST the connector sends goes through here.
 */
export function postOptions(config: StripeConfig, idempotencyKey: string): Stripe.RequestOptions {
  return { idempotencyKey, timeout: config.timeoutMs, maxNetworkRetries: 0 };
}

/** Options for a GET (no key: reads change nothing). */
export function getOptions(config: StripeConfig): Stripe.RequestOptions {
  return { timeout: config.timeoutMs, maxNetworkRetries: 0 };
}
