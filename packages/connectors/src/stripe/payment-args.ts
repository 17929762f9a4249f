import { z } from 'zod';
import type { MoneyMove } from '@agent-saga/core';

/** Arguments shared by the tools that create a PaymentIntent (`charge_card`, `authorize_payment`). */
export const paymentArgs = z.object({
  customerId: z.string().regex(/^cus_[A-Za-z0-9_]+$/, 'must be a Stripe customer id (cus_…)'),
  /** In the currency's minor unit (cents for USD). */
  amount: z.number().int().positive(),
  /** ISO 4217, any case; sent lower-cased. */
  currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be a three-letter ISO currency code'),
  /** Becomes the PaymentIntent's `description`. Why 1000: a generous bound for a one-line reason. */
  reason: z.string().min(1).max(1000),
});

/** A PaymentIntent id, as the tools that act on one take it. */
export const paymentIntentId = z.string().regex(/^pi_[A-Za-z0-9_]+$/, 'must be a PaymentIntent id (pi_…)');

/**
 * The money of the PaymentIntent a step of the run made or acted on (`charge_card`, `authorize_payment`,
 * `capture_payment`): its stored result's amount and currency when it has one, else its arguments'; null
 * when the step names neither. What a capture of an authorisation or a refund of a charge moves.
 */
export function moneyOf(
  step: { readonly args: Readonly<Record<string, unknown>>; readonly result: unknown } | undefined,
): MoneyMove | null {
  const money = paymentArgs.pick({ amount: true, currency: true });
  const parsed = money.safeParse(step?.result);
  if (parsed.success) return parsed.data;
  const fromArgs = money.safeParse(step?.args);
  return fromArgs.success ? fromArgs.data : null;
}
