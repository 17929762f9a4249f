import type { AnyTool } from './define-tool.js';
import type { LastAttemptOutcome } from './answered-rate-limit.js';

/** The HTTP status of a vendor's own failure answer, which a deduping vendor saves under the key. */
const SAVED_FAILURE = 500;

/**
 * Whether the step's last attempt was **answered 500 by a vendor that dedupes by key** (`dedupesByKey`):
 * then no request under the key is in flight, and what the vendor holds under the key is final. The
 * second case (beside an answered 429, `answered-rate-limit.ts`) in which the lookup rule may drop the
 * commit horizon, and only for a refusal found under the key (`RefusedUnderKey`):
 *
 * - such a vendor claims the key when a request arrives and saves its answer under it; a second request
 *   while one is processed is answered 409 "in flight", and one after it is told the saved answer (Stripe
 *   documents that it saves 500s: "subsequent requests with the same key return the same result, including
 *   500 errors", docs.stripe.com/api/idempotent_requests). So an answered 500 means the key's work ended;
 *   an earlier attempt still held by the vendor would have made this one a 409.
 * - Not a 502, 503 or 504: a gateway may answer those while the backend still works. Not a timeout, a
 *   reset or a lapsed lease: nothing answered.
 * - The stored error must say so of the *last* attempt (`attempt === attempts`), as for the 429.
 *
 * Why: a PaymentIntent created but never confirmed under the key (a partial batch) is settled FAILED as
 * soon as the lookup sees it, not a horizon later, and the agent makes the charge again while it still
 * waits (`pnpm simulate`: eager agents gave up on such charges at the horizon, docs/simulation.md).
 */
export function answeredUnderKey(
  tool: Pick<AnyTool, 'dedupesByKey'>,
  step: LastAttemptOutcome | undefined,
): boolean {
  if (!tool.dedupesByKey || !step || step.error === null || typeof step.error !== 'object') return false;
  const { status, attempt } = step.error;
  return status === SAVED_FAILURE && typeof attempt === 'number' && attempt === step.attempts;
}
