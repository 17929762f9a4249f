import type { LookupContext, ToolEffect } from '@agent-saga/core';
import { sendHttpRequest, type HttpCall } from '../http/send-http-request.js';
import { HttpOutcomeUnknownError } from '../http/http-errors.js';
import type { EmailConfig } from './email-config.js';
import {
  bareAddress,
  emailListSchema,
  emailSchema,
  resendEndpoint,
  SAGA_KEY_TAG,
} from './resend-connection.js';

/** Why 100: Resend's maximum `limit` on `GET /emails`. */
const PAGE_SIZE = 100;
/** Why 100 pages: 10,000 listed emails is far beyond a day of one sender's support mail; a loop guard. */
const MAX_PAGES = 100;

/**
 * Finds the email sent under `key` by its `saga_key` tag. Resend's list (`GET /emails`) has no tag filter
 * and its items carry no tags, so this lists newest first (`after` cursor, while `has_more`) and reads each
 * candidate (`GET /emails/{id}`) to see its tags.
 *
 * Bounded, by design:
 * - only emails created within `lookupWindowMs` (default 24 h, Resend's idempotency window: past it a
 *   same-key re-send is no longer a replay either, so the step needs a human anyway), and not before the
 *   step was recorded (`intendedAt`, less `lookupClockSkewMs` for the two clocks): the email was sent after
 *   its step's row committed, so an older one cannot be it. The list is newest first, so the first item
 *   older than both ends the scan: a lookup reads the emails sent since its step began, not a day of them;
 * - only emails from our own sender (`EMAIL_FROM`) are read — the list gives `from` for free;
 * - at most `lookupMaxReads` reads. When the window holds more candidates than that, the lookup cannot
 *   prove absence and says so: it throws an unknown-outcome error instead of answering null.
 *
 * The cost is one read per recent email of ours, at Resend's rate limit; that is acceptable for a lookup
 * that runs only for steps whose outcome is unknown. The newest match is returned; duplicates are not
 * searched for, since Resend's key makes them impossible within the window.
 */
export async function findEmailByTag(
  config: EmailConfig,
  key: string,
  call: HttpCall & Pick<LookupContext, 'intendedAt'>,
): Promise<ToolEffect | null> {
  const endpoint = resendEndpoint(config);
  const horizon = Math.max(
    Date.now() - config.lookupWindowMs,
    call.intendedAt.getTime() - config.lookupClockSkewMs,
  );
  const ours = bareAddress(config.from);
  let reads = 0;
  let after: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const list = await sendHttpRequest(endpoint, {
      method: 'GET',
      path: '/emails',
      query: { limit: PAGE_SIZE, after },
      answer: emailListSchema,
      call,
    });
    for (const item of list.body.data) {
      // An unparsable timestamp is read rather than taken as old: absence must be proven, not assumed.
      if (Date.parse(item.created_at) < horizon) return null;
      if (bareAddress(item.from) !== ours) continue;
      if (reads >= config.lookupMaxReads) throw tooMany(config, reads);
      reads++;
      const email = await sendHttpRequest(endpoint, {
        method: 'GET',
        path: `/emails/${encodeURIComponent(item.id)}`,
        answer: emailSchema,
        call,
      });
      if ((email.body.tags ?? []).some((t) => t.name === SAGA_KEY_TAG && t.value === key)) {
        const { id, to, subject, created_at } = email.body;
        return { externalRef: id, result: { id, to, subject, createdAt: created_at } };
      }
    }
    const last = list.body.data.at(-1);
    if (!list.body.has_more || last === undefined) return null;
    after = last.id;
  }
  throw tooMany(config, reads);
}

function tooMany(config: EmailConfig, reads: number): HttpOutcomeUnknownError {
  return new HttpOutcomeUnknownError(
    `email: lookup read ${reads} emails of the last ${config.lookupWindowMs} ms without finding the key and ` +
      'stopped at its bound (EMAIL_LOOKUP_MAX_READS); absence is not proven',
    { vendor: 'email', vendorCode: 'lookup_bound_reached' },
  );
}
