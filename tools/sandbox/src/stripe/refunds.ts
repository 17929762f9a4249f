import { prefixedId, unixSeconds } from '../ids.js';
import { getPaymentIntent } from './payment-intents.js';
import { invalidParam, resourceMissing, StripeApiError, StripeErrorType } from './stripe-error.js';
import { PaymentIntentStatus, type Charge, type Refund } from './stripe-objects.js';
import type { StripeState } from './stripe-state.js';

export interface NewRefund {
  readonly paymentIntent: string | undefined;
  readonly charge: string | undefined;
  readonly amount: number | undefined;
  readonly reason: string | undefined;
  readonly metadata: Record<string, string>;
}

/**
 * Refunds a succeeded PaymentIntent's charge, all that is left of it unless `amount` is given. Refunds are
 * capped at what was captured less what was refunded: over the cap is `amount_too_large`, nothing left is
 * `charge_already_refunded`, as Stripe answers.
 */
export function createRefund(state: StripeState, input: NewRefund): Refund {
  const charge = chargeToRefund(state, input);
  const left = charge.amount_captured - charge.amount_refunded;
  if (left <= 0) {
    throw new StripeApiError(
      400,
      StripeErrorType.INVALID_REQUEST,
      `Charge ${charge.id} has already been refunded.`,
      {
        code: 'charge_already_refunded',
      },
    );
  }
  const amount = input.amount ?? left;
  if (amount <= 0)
    throw invalidParam('Refund amount must be positive.', 'parameter_invalid_integer', 'amount');
  if (amount > left) {
    throw new StripeApiError(
      400,
      StripeErrorType.INVALID_REQUEST,
      `Refund amount (${formatMinor(amount, charge.currency)}) is greater than unrefunded amount on charge ` +
        `(${formatMinor(left, charge.currency)})`,
      { code: 'amount_too_large', param: 'amount' },
    );
  }
  const refund: Refund = {
    id: prefixedId('re'),
    object: 'refund',
    amount,
    balance_transaction: null,
    charge: charge.id,
    created: unixSeconds(),
    currency: charge.currency,
    metadata: input.metadata,
    payment_intent: charge.payment_intent,
    reason: input.reason ?? null,
    receipt_number: null,
    status: 'succeeded',
  };
  charge.amount_refunded += amount;
  charge.refunded = charge.amount_refunded >= charge.amount_captured;
  state.refunds.set(refund.id, refund);
  return refund;
}

function chargeToRefund(state: StripeState, input: NewRefund): Charge {
  if (input.paymentIntent === undefined && input.charge === undefined) {
    throw invalidParam(
      'One of the following params should be provided for this request: payment_intent or charge.',
      'parameter_missing',
      'payment_intent',
    );
  }
  if (input.charge !== undefined) {
    const charge = state.charges.get(input.charge);
    if (charge === undefined) throw resourceMissing('charge', input.charge, 'charge');
    return charge;
  }
  const pi = getPaymentIntent(state, input.paymentIntent ?? '');
  const charge = pi.latest_charge === null ? undefined : state.charges.get(pi.latest_charge);
  if (pi.status !== PaymentIntentStatus.SUCCEEDED || charge === undefined) {
    throw new StripeApiError(
      400,
      StripeErrorType.INVALID_REQUEST,
      `This PaymentIntent (${pi.id}) does not have a successful charge to refund.`,
      { code: 'payment_intent_unexpected_state', param: 'payment_intent' },
    );
  }
  return charge;
}

/** `$12.34`-style amounts in error messages, as Stripe writes them (two decimals assumed). */
function formatMinor(amount: number, currency: string): string {
  const major = (amount / 100).toFixed(2);
  return currency === 'usd' ? `$${major}` : `${major} ${currency.toUpperCase()}`;
}
