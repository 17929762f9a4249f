import { ErrorCode } from '../errors/error-code.js';
import { ClientError } from '../errors/errors.js';

/**
 * What a lookup returns when the real system holds the call made under the key and that call ended
 * **without its effect, for good**: the vendor processed it and refused it, or did part of it and stopped
 * (Stripe: a PaymentIntent created with `confirm: true` whose confirmation never ran, left in
 * `requires_confirmation`; the 500 it answered is saved under the key, so a re-send is told the same 500
 * and can never make the charge). `refused` is the error the call would have thrown had its answer come
 * back: the step becomes FAILED with it, as it would have from the executor.
 *
 * Why a third answer beside an effect and null: "not found" sends the step again with the same key, and
 * for a vendor that replays a saved failure under the key every re-send fails the same way, until the
 * re-dispatch budget sends the step to a person (`pnpm simulate`'s `partial_batch`, docs/simulation.md).
 * The lookup that sees the vendor's own record of the refused call knows better.
 *
 * It is believed once the tool's commit horizon (and lag) has passed since the last attempt, as a "not
 * found" is (`decideLookupVerdict`: a request still held by the vendor may yet complete), or at once when
 * that attempt was answered 500 by a vendor that dedupes by key (`answeredUnderKey`).
 */
export interface RefusedUnderKey {
  readonly refused: ClientError;
}

/** The lookup answer for a call the real system refused under the key: see {@link RefusedUnderKey}. */
export function refusedUnderKey(refused: ClientError): RefusedUnderKey {
  return { refused };
}

/**
 * Whether a lookup's answer is {@link RefusedUnderKey} (an effect has `externalRef`, never `refused`). By
 * shape, not only by class: a tool module that bundles its own copy of core throws and returns errors of
 * another `ClientError` class, and such a refusal must never be read as an effect found.
 */
export function isRefusedUnderKey(answer: unknown): answer is RefusedUnderKey {
  if (typeof answer !== 'object' || answer === null || !('refused' in answer)) return false;
  const refused: unknown = answer.refused;
  return (
    refused instanceof ClientError ||
    (refused instanceof Error && (refused as { code?: unknown }).code === ErrorCode.CLIENT_ERROR)
  );
}

/** The refusal as this core's {@link ClientError} (the same one when it already is). */
export function refusalOf(answer: RefusedUnderKey): ClientError {
  const r: Error = answer.refused;
  if (r instanceof ClientError) return r;
  const details = (r as { details?: ClientError['details'] }).details;
  return new ClientError(r.message, details ?? {});
}

/** The JSON a refusal leaves in an event or a detail (its message and the vendor's details), one shape. */
export function refusalDetail(error: ClientError): Record<string, unknown> {
  return { message: error.message, ...error.details };
}
