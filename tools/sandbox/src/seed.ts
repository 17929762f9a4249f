import { z } from 'zod';
import { orderSchema } from './shipping/shipping-state.js';

/** A Stripe customer to seed: an id, and the default payment method off-session charges use. */
export const customerSeedSchema = z
  .object({
    id: z.string().regex(/^cus_[A-Za-z0-9_]+$/),
    email: z.string().optional(),
    name: z.string().optional(),
    /** One of the test payment methods (pm_card_visa, pm_card_chargeDeclined, …). */
    defaultPaymentMethod: z.string().optional(),
  })
  .strict();

/** The body of `POST /__admin/seed`: customers and orders to add or replace (by id). */
export const seedSchema = z
  .object({
    customers: z.array(customerSeedSchema).optional(),
    orders: z.array(orderSchema).optional(),
  })
  .strict();
export type Seed = z.infer<typeof seedSchema>;

/**
 * What a fresh (or reset) sandbox holds: a customer whose card works, one whose card is declined, an order
 * the warehouse refuses to reship (1182, the mission's story) and one it accepts (1183).
 */
export const DEFAULT_SEED: Seed = {
  customers: [
    {
      id: 'cus_sandbox_ada',
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      defaultPaymentMethod: 'pm_card_visa',
    },
    {
      id: 'cus_sandbox_declined',
      email: 'grace@example.com',
      name: 'Grace Hopper',
      defaultPaymentMethod: 'pm_card_chargeDeclined',
    },
  ],
  orders: [
    {
      id: '1182',
      customerId: 'cus_sandbox_ada',
      items: [{ sku: 'MUG-BLUE', quantity: 1 }],
      eligibleForReship: false,
    },
    {
      id: '1183',
      customerId: 'cus_sandbox_ada',
      items: [{ sku: 'TEE-L', quantity: 2 }],
      eligibleForReship: true,
    },
  ],
};
