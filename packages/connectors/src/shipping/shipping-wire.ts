import { z } from 'zod';
import type { HttpEndpoint } from '../http/send-http-request.js';
import type { ShippingConfig } from './shipping-config.js';

export function shippingEndpoint(config: ShippingConfig): HttpEndpoint {
  return Object.freeze({
    vendor: 'shipping',
    baseUrl: config.apiBase,
    authorization: `Bearer ${config.apiKey}`,
  });
}

export const lineItemSchema = z.object({ sku: z.string().min(1), quantity: z.number().int().positive() });

/** A shipment as the API answers it (201 of create, cancel, retrieve, list items). */
export const shipmentSchema = z.object({
  id: z.string(),
  object: z.literal('shipment'),
  status: z.string(),
  orderId: z.string(),
  items: z.array(lineItemSchema),
  reason: z.string(),
  idempotencyKey: z.string(),
  createdAt: z.string(),
  canceledAt: z.string().nullish(),
});
export type Shipment = z.infer<typeof shipmentSchema>;

/** `GET /v1/shipments?idempotency_key=K`: newest first. */
export const shipmentListSchema = z.object({ object: z.literal('list'), data: z.array(shipmentSchema) });

/** `GET /v1/orders/{id}`. */
export const orderSchema = z.object({
  id: z.string(),
  customerId: z.string(),
  items: z.array(lineItemSchema),
  eligibleForReship: z.boolean(),
});

/** Shipment ids are `shp_…`; the argument of `cancel_shipment`. */
export const shipmentIdSchema = z.string().regex(/^shp_[A-Za-z0-9]+$/, 'a shipment id (shp_…)');
