import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { idempotencyKeyOf } from '../idempotency/install-idempotency.js';
import { prefixedId } from '../ids.js';
import { ShippingApiError } from './shipping-error.js';
import { lineItemSchema, ShipmentStatus, type Shipment, type ShippingState } from './shipping-state.js';

const createShipmentSchema = z
  .object({ orderId: z.string().min(1), items: z.array(lineItemSchema).min(1), reason: z.string().min(1) })
  .strict();

/** Rejects a reship the warehouse will not do: an unknown order, one not eligible, or items not in it. */
function assertEligible(
  state: ShippingState,
  orderId: string,
  items: readonly { sku: string; quantity: number }[],
): void {
  const order = state.orders.get(orderId);
  if (order === undefined)
    throw new ShippingApiError(422, 'order_not_eligible', `Order ${orderId} does not exist.`);
  if (!order.eligibleForReship) {
    throw new ShippingApiError(
      422,
      'order_not_eligible',
      `Order ${orderId} is not eligible for a reshipment.`,
    );
  }
  for (const item of items) {
    const ordered = order.items.find((i) => i.sku === item.sku);
    if (ordered === undefined || item.quantity > ordered.quantity) {
      throw new ShippingApiError(
        422,
        'order_not_eligible',
        `Order ${orderId} has no ${item.quantity} × ${item.sku} to reship.`,
      );
    }
  }
}

function findShipment(state: ShippingState, id: string): Shipment {
  const shipment = state.shipments.get(id);
  if (shipment === undefined) throw new ShippingApiError(404, 'not_found', `No shipment ${id}.`);
  return shipment;
}

/** The shipping API's routes; see docs/sandbox.md for the contract. */
export function registerShipmentRoutes(app: FastifyInstance, state: ShippingState): void {
  app.post('/v1/shipments', (request, reply) => {
    const parsed = createShipmentSchema.safeParse(request.body);
    if (!parsed.success) {
      throw new ShippingApiError(
        400,
        'invalid_request',
        parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
      );
    }
    const { orderId, items, reason } = parsed.data;
    assertEligible(state, orderId, items);
    const shipment: Shipment = {
      id: prefixedId('shp'),
      object: 'shipment',
      status: ShipmentStatus.CREATED,
      orderId,
      items,
      reason,
      idempotencyKey: idempotencyKeyOf(request) ?? '',
      createdAt: new Date().toISOString(),
      canceledAt: null,
    };
    state.shipments.set(shipment.id, shipment);
    return reply.code(201).send(structuredClone(shipment));
  });

  app.get<{ Querystring: { idempotency_key?: string; orderId?: string } }>('/v1/shipments', (request) => {
    const { idempotency_key: key, orderId } = request.query;
    const data = [...state.shipments.values()]
      .reverse()
      .filter(
        (s) =>
          (key === undefined || s.idempotencyKey === key) && (orderId === undefined || s.orderId === orderId),
      );
    return { object: 'list', data: structuredClone(data) };
  });

  app.get<{ Params: { id: string } }>('/v1/shipments/:id', (request) =>
    structuredClone(findShipment(state, request.params.id)),
  );

  app.post<{ Params: { id: string } }>('/v1/shipments/:id/cancel', (request) => {
    const shipment = findShipment(state, request.params.id);
    if (shipment.status !== ShipmentStatus.CANCELED) {
      shipment.status = ShipmentStatus.CANCELED;
      shipment.canceledAt = new Date().toISOString();
    }
    return structuredClone(shipment);
  });

  app.get<{ Params: { id: string } }>('/v1/orders/:id', (request) => {
    const order = state.orders.get(request.params.id);
    if (order === undefined) throw new ShippingApiError(404, 'not_found', `No order ${request.params.id}.`);
    return structuredClone(order);
  });
}
