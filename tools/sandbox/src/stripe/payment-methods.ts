/**
 * Stripe's documented test PaymentMethods the sandbox knows, and how each behaves on confirmation. A
 * customer's default payment method must be one of these.
 */
export interface TestPaymentMethod {
  readonly id: string;
  readonly brand: string;
  /** Undefined: the charge succeeds; otherwise the decline the confirmation meets (402 card_error). */
  readonly decline?: { readonly code: string; readonly declineCode: string; readonly message: string };
}

const DECLINED = {
  code: 'card_declined',
  declineCode: 'generic_decline',
  message: 'Your card was declined.',
};
const NO_FUNDS = {
  code: 'card_declined',
  declineCode: 'insufficient_funds',
  message: 'Your card has insufficient funds.',
};

export const TEST_PAYMENT_METHODS: ReadonlyMap<string, TestPaymentMethod> = new Map(
  [
    { id: 'pm_card_visa', brand: 'visa' },
    { id: 'pm_card_mastercard', brand: 'mastercard' },
    { id: 'pm_card_amex', brand: 'amex' },
    { id: 'pm_card_chargeDeclined', brand: 'visa', decline: DECLINED },
    { id: 'pm_card_chargeDeclinedInsufficientFunds', brand: 'visa', decline: NO_FUNDS },
  ].map((pm) => [pm.id, pm]),
);
