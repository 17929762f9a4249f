import { ClientError } from '@agent-saga/core';
import { callStripe, getOptions, type CallContext } from './call-stripe.js';
import type { StripeToolDeps } from './stripe-tool-deps.js';

/**
 * The customer's default payment method (`invoice_settings.default_payment_method`), which an off-session
 * PaymentIntent is confirmed against. Live Stripe wants the payment method named, so we read it rather
 * than rely on a fallback. No default is a definitive refusal: nothing was sent that could charge.
 */
export async function defaultPaymentMethod(
  { stripe, config }: StripeToolDeps,
  ctx: CallContext,
  customerId: string,
): Promise<string> {
  const customer = await callStripe(ctx, () =>
    stripe.customers.retrieve(customerId, {}, getOptions(config, ctx)),
  );
  if (customer.deleted === true) {
    throw new ClientError(`Stripe customer ${customerId} is deleted`, { vendorCode: 'customer_deleted' });
  }
  const pm = customer.invoice_settings.default_payment_method;
  const id = typeof pm === 'string' ? pm : (pm?.id ?? null);
  if (id === null) {
    throw new ClientError(`Stripe customer ${customerId} has no default payment method`, {
      vendorCode: 'no_default_payment_method',
    });
  }
  return id;
}
