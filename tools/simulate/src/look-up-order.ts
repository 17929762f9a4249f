/**
 * What the simulated person looks up outside agent-saga before approving a pivot: the order, in the
 * warehouse's own API (`GET /v1/orders/{id}`, the request `get_order` makes), as a support lead opens the
 * shop's back office beside the approval.
 */
import type { RunningSandbox } from '@agent-saga/sandbox';
import type { OperatorLookups } from './approve-held-emails.js';

/** Why 5 s: a read of the in-process sandbox; past that the person is treated as having found nothing. */
const LOOKUP_TIMEOUT_MS = 5_000;

export function warehouseLookups(sandbox: RunningSandbox): OperatorLookups {
  return {
    async orderEligible(orderId) {
      const res = await fetch(`${sandbox.urls.shipping}/v1/orders/${encodeURIComponent(orderId)}`, {
        headers: { authorization: `Bearer ${sandbox.credentials.shippingApiKey}` },
        signal: AbortSignal.timeout(LOOKUP_TIMEOUT_MS),
      });
      if (!res.ok) return false; // an order the warehouse does not know is not one to reship
      const order = (await res.json()) as { eligibleForReship?: unknown };
      return order.eligibleForReship === true;
    },
  };
}
