import { ClientError, type SagaError } from '@agent-saga/core';
import { VendorIdempotencyMismatchError } from '../vendor-idempotency-mismatch-error.js';
import { HttpOutcomeUnknownError } from './http-errors.js';

/** What went wrong with one HTTP call to a vendor: an answer other than 2xx, or no answer at all. */
export type HttpFailure =
  | {
      readonly kind: 'response';
      readonly vendor: string;
      readonly status: number;
      /** The parsed JSON body, or `undefined` when the body was empty or not JSON (a gateway's HTML page). */
      readonly body: unknown;
      /** The tool's attempt that got this answer (`ToolContext.attempt`); absent for a lookup's request. */
      readonly attempt?: number;
      /** The answer's `Retry-After`, in milliseconds, when it carried one. */
      readonly retryAfterMs?: number;
    }
  | { readonly kind: 'transport'; readonly vendor: string; readonly error: unknown };

/**
 * Statuses by which a vendor definitively refuses a request before doing anything: a bad request (Jira's
 * 400 with `errorMessages`/`errors`, shipping's malformed body), bad credentials, a missing resource, a
 * validation failure (Resend's and shipping's 422). 405, 410 (Jira's removed `/search`), 413 and 415 refuse
 * the request by its shape, likewise.
 */
const DEFINITIVE_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 404, 405, 410, 413, 415, 422]);

/** Vendor codes of a 409 that mean "this key was first used with another body" (shipping, Resend). */
const KEY_MISMATCH_CODES: ReadonlySet<string> = new Set([
  'idempotency_key_mismatch',
  'invalid_idempotent_request',
]);

/**
 * Maps a failed vendor call onto what the harness must do, for the plain-`fetch` vendors (Jira, Resend,
 * shipping). The one place that decides:
 *
 * - A definitive 4xx ({@link DEFINITIVE_STATUSES}) with a JSON error body → {@link ClientError} with
 *   `{ status, vendorCode }`: nothing happened, the step is FAILED. A 4xx whose body is not JSON came from
 *   something in between (a proxy, a load balancer), not from the vendor's validation: unknown.
 * - 409 "same key, other body" → {@link VendorIdempotencyMismatchError} (`VENDOR_IDEMPOTENCY_MISMATCH`).
 * - Everything else → {@link HttpOutcomeUnknownError}, keeping the status: 409 "in flight" (the first
 *   request may still commit), 408, 425, 5xx (a 504 is often sent after the work was done), and every
 *   transport failure — resets (`ECONNRESET`, undici's `UND_ERR_SOCKET`), refusals, DNS, aborts and timeouts.
 *
 * **429 is unknown, not a ClientError.** Resend and Stripe document that a rate-limited request was not
 * processed, so FAILED would be defensible; but a 429 is as often answered by a gateway in front of the
 * vendor as by the vendor, and Jira documents 429 without that promise. Unknown costs one lookup (which,
 * with the key in hand, proves absence after the lag) and never loses an effect; FAILED on a 429 that was
 * in fact processed would let a retry under a new step duplicate it.
 *
 * An unknown outcome that came with an answer carries the answer's `status`, the `attempt` it answered and
 * its `Retry-After`: core's lookup rule reads them to drop the commit horizon for an attempt answered 429
 * (nothing is in flight after an answer; `answered-rate-limit.ts` in `@agent-saga/core`), and only then —
 * a 5xx may come from a gateway whose backend still works. No answer (a transport failure), no attempt.
 */
export function classifyHttpFailure(failure: HttpFailure): SagaError {
  if (failure.kind === 'transport') return classifyTransport(failure.vendor, failure.error);
  const { vendor, status, body, attempt, retryAfterMs } = failure;
  const vendorCode = vendorCodeOf(body);
  const message = `${vendor}: HTTP ${status}${vendorCode ? ` ${vendorCode}` : ''}: ${messageOf(body) ?? 'no error body'}`;
  const details = { vendor, status, ...(vendorCode !== undefined ? { vendorCode } : {}) };
  if (status === 409 && vendorCode !== undefined && KEY_MISMATCH_CODES.has(vendorCode)) {
    return new VendorIdempotencyMismatchError(message, details);
  }
  if (DEFINITIVE_STATUSES.has(status) && isJsonObject(body)) {
    return new ClientError(message, details);
  }
  return new HttpOutcomeUnknownError(message, {
    ...details,
    ...(attempt !== undefined ? { attempt } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

function classifyTransport(vendor: string, error: unknown): SagaError {
  const name = error instanceof Error ? error.name : undefined;
  if (name === 'AbortError' || name === 'TimeoutError') {
    return new HttpOutcomeUnknownError(
      `${vendor}: the call was aborted before an answer arrived (${name})`,
      { vendor, vendorCode: name === 'TimeoutError' ? 'timeout' : 'aborted' },
      { cause: error },
    );
  }
  const socketCode = causeCode(error);
  return new HttpOutcomeUnknownError(
    `${vendor}: no answer (${socketCode ?? (error instanceof Error ? error.message : String(error))})`,
    { vendor, ...(socketCode !== undefined ? { vendorCode: socketCode } : {}) },
    { cause: error },
  );
}

/** undici wraps socket errors: `TypeError('fetch failed', { cause: { code: 'ECONNRESET' | 'UND_ERR_SOCKET' } })`. */
function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function isJsonObject(body: unknown): body is Record<string, unknown> {
  return body !== null && typeof body === 'object' && !Array.isArray(body);
}

/**
 * The vendor's error code from its documented error body: shipping `{ error: { code } }`, Resend
 * `{ name }`, Jira `{ errorMessages, errors }` (no codes: the first field in error, or `jira_error`).
 */
function vendorCodeOf(body: unknown): string | undefined {
  if (!isJsonObject(body)) return undefined;
  const nested = body.error;
  if (isJsonObject(nested) && typeof nested.code === 'string') return nested.code;
  if (typeof body.name === 'string') return body.name;
  if (Array.isArray(body.errorMessages) || isJsonObject(body.errors)) {
    const field = isJsonObject(body.errors) ? Object.keys(body.errors)[0] : undefined;
    return field === undefined ? 'jira_error' : `jira_field:${field}`;
  }
  return undefined;
}

function messageOf(body: unknown): string | undefined {
  if (!isJsonObject(body)) return undefined;
  const nested = body.error;
  if (isJsonObject(nested) && typeof nested.message === 'string') return nested.message;
  if (typeof body.message === 'string') return body.message;
  const parts = [
    ...(Array.isArray(body.errorMessages) ? body.errorMessages.filter((m) => typeof m === 'string') : []),
    ...(isJsonObject(body.errors)
      ? Object.entries(body.errors).map(([field, m]) => `${field}: ${String(m)}`)
      : []),
  ];
  return parts.length > 0 ? parts.join('; ') : undefined;
}
