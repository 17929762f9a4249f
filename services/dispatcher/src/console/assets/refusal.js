import { ApiRefusal } from './api.js';
import { h, oneLine } from './dom.js';

/**
 * What a refusal means for the person who clicked, by the API's error code. Every refusal is shown with
 * its code and the API's own message; these lines only add what to do next.
 */
const HINTS = {
  APPROVAL_HASH_MISMATCH:
    'The proposal changed after this page read it. Nothing was decided. Reload it, read the new proposal ' +
    'and its new hash, and decide again.',
  APPROVAL_DECIDED:
    'This approval was already decided (or a newer proposal replaced it). Your click changed nothing.',
  APPROVAL_EXPIRED: 'The deadline has passed: this proposal can no longer be approved. The run unwinds.',
  RUN_NOT_RUNNING:
    'The run no longer waits for this decision (it was unwound, or it ended). Nothing was decided and ' +
    'nothing will be sent.',
  FORBIDDEN: 'This token may only read. Sign in with an operator token to decide.',
  UNAUTHORIZED: 'The token is unknown or revoked. Sign in again.',
  NOT_FOUND: 'Not found for this tenant.',
  CORRECTION_REFUSED: 'The vendor refused the message: nothing was sent.',
  CORRECTION_OUTCOME_UNKNOWN:
    'Nobody knows yet whether the message went out. The email lookup by its key settles it; sending again ' +
    'settles it first and never sends a second message.',
  CORRECTION_SENDING:
    'A send of this message has started and is not settled yet: it cannot be edited or dismissed. Reload ' +
    'it in a little while.',
  NETWORK: 'Check that the dispatcher API is up, then try again.',
};

/**
 * A refusal as the page shows it: `role="alert"`, the code in bold, the HTTP status, the API's message, the
 * error's other fields (such as the approval's current status) and a hint. `data-code` lets tests and
 * styles find it.
 */
export function refusalBox(err) {
  const r =
    err instanceof ApiRefusal
      ? err
      : new ApiRefusal(0, 'CONSOLE_ERROR', err instanceof Error ? err.message : String(err));
  const extra = Object.keys(r.detail ?? {}).length ? oneLine(r.detail, 300) : null;
  return h(
    'div',
    { class: 'refusal', role: 'alert', 'data-code': r.code },
    h(
      'p',
      {},
      h('strong', { class: 'code' }, r.code),
      r.status ? ` (HTTP ${r.status})` : '',
      ': ',
      r.message,
    ),
    extra && h('p', { class: 'detail' }, extra),
    HINTS[r.code] && h('p', { class: 'hint' }, HINTS[r.code]),
  );
}

/** True when trying the same request again may work (no answer, or the server failed). */
export const retryable = (err) => err instanceof ApiRefusal && (err.status === 0 || err.status >= 500);
