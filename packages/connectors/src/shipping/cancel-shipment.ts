import { Audience, defineTool, ToolClass } from '@agent-saga/core';
import { z } from 'zod';
import { sendHttpRequest } from '../http/send-http-request.js';
import type { ShippingConfig } from './shipping-config.js';
import { shipmentIdSchema, shipmentSchema, shippingEndpoint } from './shipping-wire.js';

export const cancelShipmentArgs = z.object({
  /** The shipment id; a `{ $ref }` in a stored compensation is resolved by the compensator before the call. */
  shipment: shipmentIdSchema,
});

/**
 * `cancel_shipment`: `POST /v1/shipments/{id}/cancel`, the compensation of `reship`. Irreversible in its own
 * right.
 *
 * Keyed how: the API takes no key on cancel, and nothing on a shipment records who cancelled it, so the
 * cancel cannot be found by its key. We still send `Idempotency-Key: <key>` (ignored by the API today; it
 * shows in request logs and becomes real if the API ever honours it). What makes a re-send safe is the
 * resource: the cancel is idempotent (a second cancel answers the same canceled shipment). The lookup
 * therefore checks the state the call was meant to reach, from its stored arguments (`ctx.args.shipment`):
 * `GET /v1/shipments/{id}` (consistent at once, lag 0) in status `canceled` → found; otherwise null, and a
 * re-send converges on the same state.
 */
export function cancelShipmentTool(config: ShippingConfig) {
  const endpoint = shippingEndpoint(config);
  return defineTool({
    name: 'cancel_shipment',
    description: 'Cancels a shipment that has not left yet (the undo of reship).',
    class: ToolClass.IRREVERSIBLE,
    version: 1,
    args: cancelShipmentArgs,
    // The canceled shipment echoes the reship's free-text reason; the argument is a shipment id only.
    personalResult: ['reason'],
    audience: [Audience.CUSTOMER],
    async execute(args, ctx) {
      const answer = await sendHttpRequest(endpoint, {
        method: 'POST',
        path: `/v1/shipments/${encodeURIComponent(args.shipment)}/cancel`,
        headers: { 'Idempotency-Key': ctx.idempotencyKey },
        answer: shipmentSchema,
        call: ctx,
      });
      return { externalRef: answer.body.id, result: answer.body };
    },
    async lookup(_key, ctx) {
      const parsed = cancelShipmentArgs.safeParse(ctx.args);
      if (!parsed.success) return null;
      const answer = await sendHttpRequest(endpoint, {
        method: 'GET',
        path: `/v1/shipments/${encodeURIComponent(parsed.data.shipment)}`,
        answer: shipmentSchema,
        call: ctx,
      });
      return answer.body.status === 'canceled' ? { externalRef: answer.body.id, result: answer.body } : null;
    },
    // Sent with the API's Idempotency-Key: a re-send under it makes no second shipment or cancellation.
    dedupesByKey: true,
    lookupLagMs: 0,
  });
}
