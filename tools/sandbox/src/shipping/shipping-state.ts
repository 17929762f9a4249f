import { z } from 'zod';

export const ShipmentStatus = { CREATED: 'created', CANCELED: 'canceled' } as const;
export type ShipmentStatus = (typeof ShipmentStatus)[keyof typeof ShipmentStatus];

export const lineItemSchema = z
  .object({ sku: z.string().min(1), quantity: z.number().int().min(1) })
  .strict();
export type LineItem = z.infer<typeof lineItemSchema>;

/** An order of the warehouse, seeded through `/__admin/seed`. */
export const orderSchema = z
  .object({
    id: z.string().min(1),
    customerId: z.string().min(1),
    items: z.array(lineItemSchema),
    eligibleForReship: z.boolean(),
  })
  .strict();
export type Order = z.infer<typeof orderSchema>;

export interface Shipment {
  readonly id: string;
  readonly object: 'shipment';
  status: ShipmentStatus;
  readonly orderId: string;
  readonly items: LineItem[];
  readonly reason: string;
  readonly idempotencyKey: string;
  readonly createdAt: string;
  canceledAt: string | null;
}

/** The fake warehouse: its orders and the shipments created, oldest first. */
export class ShippingState {
  readonly orders = new Map<string, Order>();
  readonly shipments = new Map<string, Shipment>();

  clear(): void {
    this.orders.clear();
    this.shipments.clear();
  }
}
