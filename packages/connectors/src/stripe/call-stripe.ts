import type { LookupContext } from '@agent-saga/core';
import type Stripe from 'stripe';
import { classifyStripeError } from './classify-stripe-error.js';
import type { StripeConfig } from './stripe-config.js';
import { StripeOutcomeUnknownError } from './stripe-errors.js';

/**
 * What every Stripe call needs from the tool's context: the abort signal, the logger, and the traceparent
 * of the call's span (sent as a request header through the options below).
 */
export type CallContext = Pick<LookupContext, 'signal' | 'logger' | 'traceparent'> & {
  /** The tool call's attempt (`ToolContext.attempt`); a lookup has none. */
  readonly attempt?: number;
};

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
    const e = classifyStripeError(err, ctx.logger);
    // An answer Stripe gave to this attempt: stamped, so the lookup rule can trust it for the last attempt.
    if (e instanceof StripeOutcomeUnknownError && e.status !== undefined && ctx.attempt !== undefined)
      throw new StripeOutcomeUnknownError(
        e.message,
        { status: e.status, vendorCode: e.vendorCode, requestId: e.requestId, attempt: ctx.attempt },
        { cause: e.cause },
      );
    throw e;
  } finally {
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Options for a POST: the harness's key as Stripe's `Idempotency-Key` (overriding the one the client would
 * generate), the configured timeout, and the call's `traceparent` header ({@link traceHeaders}). Every POST
 * the connector sends goes through here.
 */
export function postOptions(
  config: StripeConfig,
  idempotencyKey: string,
  ctx: CallContext,
): Stripe.RequestOptions {
  return { idempotencyKey, timeout: config.timeoutMs, maxNetworkRetries: 0, ...traceHeaders(ctx) };
}

/** Options for a GET (no key: reads change nothing), with the call's `traceparent` header. */
export function getOptions(config: StripeConfig, ctx: CallContext): Stripe.RequestOptions {
  return { timeout: config.timeoutMs, maxNetworkRetries: 0, ...traceHeaders(ctx) };
}

/**
 * The one place the Stripe connector builds its own request headers: the W3C `traceparent` of the call's
 * span, through the client's per-request `headers` option (the client adds its own auth and version).
 */
function traceHeaders(ctx: CallContext): Pick<Stripe.RequestOptions, 'headers'> {
  return ctx.traceparent !== undefined ? { headers: { traceparent: ctx.traceparent } } : {};
}
