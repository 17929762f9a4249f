import type { ToolContext } from '@agent-saga/core';
import type { z } from 'zod';
import { classifyHttpFailure } from './classify-http-failure.js';
import { HttpOutcomeUnknownError } from './http-errors.js';
import { parseRetryAfter } from './retry-after.js';

/** One vendor's base URL and the `Authorization` header value, built once from config. */
export interface HttpEndpoint {
  readonly vendor: string;
  /** No trailing slash. */
  readonly baseUrl: string;
  /** Sent as `Authorization`; never logged, never put in an error. */
  readonly authorization: string;
}

export interface HttpRequest<T> {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Starts with `/`; path segments from arguments must already be `encodeURIComponent`-ed. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON when present. */
  readonly body?: unknown;
  /** Validates a 2xx body (an empty body is `undefined`): an answer the API does not document is unknown. */
  readonly answer: z.ZodType<T>;
  /**
   * The tool's context (`ctx`, or what a helper was handed of it): its `signal` (the harness aborts at the
   * tool's timeout or on shutdown) and its `traceparent` (sent as the W3C header, so the vendor's side joins
   * the step's trace).
   */
  readonly call: HttpCall;
}

/**
 * What a request takes from the tool's context: the abort signal, the trace context of its span, and on a
 * tool call its `attempt` (a lookup's context has none), which an unknown outcome's error keeps so the
 * lookup rule knows which attempt a 429 answered.
 */
export type HttpCall = Pick<ToolContext, 'signal' | 'traceparent'> & Partial<Pick<ToolContext, 'attempt'>>;

export interface HttpAnswer<T> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

/**
 * Sends one request with plain `fetch` (the one place the Jira, email and shipping connectors build their
 * headers: `authorization`, the call's `traceparent`, the request's own) and returns the validated 2xx answer; anything else throws the error
 * {@link classifyHttpFailure} chooses. No retries here: a retry is the harness's decision, after a lookup.
 */
export async function sendHttpRequest<T>(
  endpoint: HttpEndpoint,
  req: HttpRequest<T>,
): Promise<HttpAnswer<T>> {
  const url = new URL(`${endpoint.baseUrl}${req.path}`);
  for (const [name, value] of Object.entries(req.query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  const headers: Record<string, string> = {
    accept: 'application/json',
    authorization: endpoint.authorization,
    ...(req.call.traceparent !== undefined ? { traceparent: req.call.traceparent } : {}),
    ...req.headers,
  };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: req.method,
      headers,
      ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
      signal: req.call.signal,
    });
    // The body can fail too (a reset mid-answer): same class as no answer at all.
    text = await response.text();
  } catch (error) {
    throw classifyHttpFailure({ kind: 'transport', vendor: endpoint.vendor, error });
  }
  const body = parseJson(text);
  if (!response.ok) {
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    throw classifyHttpFailure({
      kind: 'response',
      vendor: endpoint.vendor,
      status: response.status,
      body,
      ...(req.call.attempt !== undefined ? { attempt: req.call.attempt } : {}),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  const parsed = req.answer.safeParse(body);
  if (!parsed.success) {
    // A 2xx we cannot read: the effect may exist, but we cannot say which.
    throw new HttpOutcomeUnknownError(
      `${endpoint.vendor}: ${req.method} ${req.path} answered ${response.status} with a body the API does not document`,
      { vendor: endpoint.vendor, status: response.status, vendorCode: 'unexpected_body' },
    );
  }
  return { status: response.status, headers: response.headers, body: parsed.data };
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
