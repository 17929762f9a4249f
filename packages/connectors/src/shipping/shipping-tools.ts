import type { AnyTool } from '@agent-saga/core';
import { cancelShipmentTool } from './cancel-shipment.js';
import { getOrderTool } from './get-order.js';
import { reshipTool } from './reship.js';
import type { ShippingConfig } from './shipping-config.js';

/**
 * The shipping tools: `reship` (→ `cancel_shipment`), `cancel_shipment`, `get_order` (pure). No tool
 * declares a `commitHorizonMs` (the default, its timeout, holds): the warehouse dedupes a re-send by its
 * idempotency key, so a "not found" believed before a held request commits cannot ship twice.
 */
export function createShippingTools(config: ShippingConfig): readonly AnyTool[] {
  return [reshipTool(config), cancelShipmentTool(config), getOrderTool(config)];
}
