import type { InvariantLookupContext } from '@agent-saga/core';
import { z } from 'zod';
import { sendHttpRequest } from '../http/send-http-request.js';
import type { ShippingConfig } from './shipping-config.js';
import { shipmentListSchema, shippingEndpoint, type Shipment } from './shipping-wire.js';

const orderIdSchema = z.string().trim().min(1).max(100);

/**
 * The shipping reads a definition's invariant may make, over the tools' endpoint: `shipmentsOf(orderId)`,
 * every shipment of an order whoever made it (`GET /v1/shipments?orderId=…`, newest first, consistent at
 * once), so a shipment a person created by hand is seen as well as the run's own.
 */
export function createShippingLookups(config: ShippingConfig) {
  const endpoint = shippingEndpoint(config);
  return Object.freeze({
    async shipmentsOf(orderId: string, ctx: InvariantLookupContext): Promise<readonly Shipment[]> {
      const answer = await sendHttpRequest(endpoint, {
        method: 'GET',
        path: '/v1/shipments',
        query: { orderId: orderIdSchema.parse(orderId) },
        answer: shipmentListSchema,
        call: ctx,
      });
      return answer.body.data;
    },
  });
}
