import { Audience, defineTool, ref, ToolClass, type ToolEffect } from '@agent-saga/core';
import { z } from 'zod';
import { sendHttpRequest } from '../http/send-http-request.js';
import type { ShippingConfig } from './shipping-config.js';
import {
  lineItemSchema,
  shipmentListSchema,
  shipmentSchema,
  shippingEndpoint,
  type Shipment,
} from './shipping-wire.js';

export const reshipArgs = z.object({
  orderId: z.string().trim().min(1).max(100),
  items: z.array(lineItemSchema).min(1).max(100),
  reason: z.string().trim().min(1).max(1_000),
});

const effectOf = (s: Shipment) => ({ externalRef: s.id, result: s });

/**
 * `reship`: `POST /v1/shipments` with the step key as the required `Idempotency-Key`. The API saves its
 * answer under the key (201 and 422 alike) and replays it to a same-key, same-body re-send, so a retry after
 * a 504 makes no second shipment. 422 `order_not_eligible` is a `ClientError`; 409
 * `idempotency_key_mismatch` is `VENDOR_IDEMPOTENCY_MISMATCH`; 409 `idempotency_key_in_use` is unknown.
 * The lookup is `GET /v1/shipments?idempotency_key=K`, consistent at once (lag 0).
 *
 * Compensatable: a shipment can be cancelled before it leaves the warehouse (`cancel_shipment`), which the
 * customer may notice, hence audience `customer`.
 */
export function reshipTool(config: ShippingConfig) {
  const endpoint = shippingEndpoint(config);
  return defineTool({
    name: 'reship',
    description:
      'Ships a replacement for an order to its address. Cancelled if the run is undone before it leaves.',
    class: ToolClass.COMPENSATABLE,
    version: 1,
    args: reshipArgs,
    identity: ['orderId'],
    // The warehouse ships to the order's address on file: no address, name or phone travels in the
    // arguments or the answer. The reason is free text a model writes about the customer's case (it may
    // quote the address), and the shipment echoes it back.
    personal: ['reason'],
    personalResult: ['reason'],
    audience: [Audience.CUSTOMER],
    compensate: (_args, key) => ({ tool: 'cancel_shipment', args: { shipment: ref(key) } }),
    async execute(args, ctx) {
      const answer = await sendHttpRequest(endpoint, {
        method: 'POST',
        path: '/v1/shipments',
        headers: { 'Idempotency-Key': ctx.idempotencyKey },
        body: { orderId: args.orderId, items: args.items, reason: args.reason },
        answer: shipmentSchema,
        call: ctx,
      });
      return effectOf(answer.body);
    },
    async lookup(key, ctx): Promise<ToolEffect | null> {
      const answer = await sendHttpRequest(endpoint, {
        method: 'GET',
        path: '/v1/shipments',
        query: { idempotency_key: key },
        answer: shipmentListSchema,
        call: ctx,
      });
      // Newest first: the effect is the oldest; any other under one key is a duplicate-effect incident.
      const [first, ...rest] = [...answer.body.data].reverse();
      if (first === undefined) return null;
      return { ...effectOf(first), ...(rest.length > 0 ? { duplicates: rest.map((s) => s.id) } : {}) };
    },
    // Sent with the API's Idempotency-Key: a re-send under it makes no second shipment or cancellation.
    dedupesByKey: true,
    lookupLagMs: 0,
  });
}
