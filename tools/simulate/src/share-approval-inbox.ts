/**
 * The operators who decide held emails, sized to the episodes in flight: one person decides one held email
 * at a time (three requests: read the approval, read its run, decide), so a single operator's queue grows
 * with the concurrency. Several operators split the inbox by run, so each run's held emails are still
 * decided by one person, in order, and the "already sent or held" rule (approve-held-emails.ts) reads the
 * run as it stands, as a single person would.
 */
import type { SagaClient } from '@agent-saga/client';

/**
 * Why one operator per 8 episodes in flight: a decision took about 0.5–0.8 s on two busy cores; at 64
 * episodes in flight some 20 emails waited at once, and a single operator let the last wait 15–20 s,
 * past an eager agent's 20 s budget (measured 2 December 2026: eager `ticket_and_email` episodes gave up
 * while their email waited, none with a fault to blame). Eight in flight keep each queue to two or three.
 */
export const EPISODES_PER_OPERATOR = 8;

/** How many operators watch the inbox when `concurrency` episodes are in flight (at least one). */
export function operatorsFor(concurrency: number): number {
  return Math.max(1, Math.ceil(concurrency / EPISODES_PER_OPERATOR));
}

/**
 * Why 250 ms: the operators poll the inbox every 300 ms each (approve-held-emails.ts); one listing serves
 * every operator that asks within this long, so the api lists the inbox about as often as for one operator,
 * however many share it.
 */
const LISTING_REUSED_MS = 250;

/**
 * The operator client as each of `of` operators sees the inbox: operator `i` lists only the approvals of
 * its share of the runs (from one listing shared by all, see {@link LISTING_REUSED_MS}); every other call
 * is the client's own.
 */
export function shareInbox(operator: SagaClient, of: number): readonly SagaClient[] {
  if (of === 1) return [operator];
  let last:
    | { readonly key: string; readonly at: number; readonly listing: ReturnType<SagaClient['listApprovals']> }
    | undefined;
  const listing: SagaClient['listApprovals'] = (query) => {
    const key = JSON.stringify(query ?? {});
    const now = Date.now();
    if (last === undefined || last.key !== key || now - last.at >= LISTING_REUSED_MS)
      last = { key, at: now, listing: operator.listApprovals(query) };
    return last.listing;
  };
  return Array.from({ length: of }, (_, share) => ({
    ...operator,
    async listApprovals(query) {
      const all = await listing(query);
      return all.filter((a) => shareOfRun(a.runId, of) === share);
    },
  }));
}

/** A stable share in `[0, of)` for a run id (FNV-1a over its UTF-16 code units). */
export function shareOfRun(runId: string, of: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < runId.length; i++) h = Math.imul(h ^ runId.charCodeAt(i), 0x01000193);
  return (h >>> 0) % of;
}
