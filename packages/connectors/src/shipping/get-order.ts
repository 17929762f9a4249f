import { defineTool, ToolClass } from '@agent-saga/core';
import { z } from 'zod';
import { sendHttpRequest } from '../http/send-http-request.js';
import type { ShippingConfig } from './shipping-config.js';
import { orderSchema, shippingEndpoint } from './shipping-wire.js';

/** `get_order`: reads an order (`GET /v1/orders/{id}`); pure. An unknown order is a `ClientError` (404). */
export function getOrderTool(config: ShippingConfig) {
  const endpoint = shippingEndpoint(config);
  return defineTool({
    name: 'get_order',
    description: 'Reads an order: its items, customer and shipping address. Changes nothing.',
    class: ToolClass.PURE,
    version: 1,
    args: z.object({ orderId: z.string().trim().min(1).max(100) }),
    // Nothing personal: the answer is parsed to the order's id, customer id (a pseudonym), items and
    // eligibility (`orderSchema` drops the rest of what the warehouse sends).
    async execute(args, ctx) {
      const answer = await sendHttpRequest(endpoint, {
        method: 'GET',
        path: `/v1/orders/${encodeURIComponent(args.orderId)}`,
        answer: orderSchema,
        call: ctx,
      });
      return { externalRef: null, result: answer.body };
    },
  });
}
