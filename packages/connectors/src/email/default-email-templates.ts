import { z } from 'zod';
import type { EmailTemplates } from './email-templates.js';

/** An amount in minor units (cents) and an ISO currency, as Stripe gives them. */
const money = z.object({
  amount: z.number().int().nonnegative(),
  currency: z.string().regex(/^[a-zA-Z]{3}$/),
});
const formatMoney = (m: z.infer<typeof money>) =>
  `${(m.amount / 100).toFixed(2)} ${m.currency.toUpperCase()}`;

const refundVars = money.extend({ orderId: z.string().min(1), customerName: z.string().min(1).optional() });
const noteVars = money.extend({ orderId: z.string().min(1).optional() });
const correctionVars = z.object({ originalTemplate: z.string().min(1) });

const greeting = (name: string | undefined) => (name ? `Hello ${name},` : 'Hello,');

/**
 * The templates every deployment has. Plain text only (no HTML, so nothing to escape); a deployment adds
 * its own by spreading this object into a bigger one.
 *
 * - `refund_confirmation { orderId, amount, currency, customerName? }`: the refund the support run made.
 * - `charge_refunded_note { amount, currency, orderId? }`: the correction the Stripe connector stores for a
 *   charge the customer could have seen before it was refunded.
 * - `email_sent_in_error { originalTemplate }`: the correction `send_email` stores (a human decides).
 */
export const DEFAULT_EMAIL_TEMPLATES: EmailTemplates = Object.freeze({
  refund_confirmation: (raw) => {
    const v = refundVars.parse(raw);
    return {
      subject: `Your refund for order ${v.orderId}`,
      text: `${greeting(v.customerName)}\n\nWe have refunded ${formatMoney(v)} for order ${v.orderId}. It reaches your account within 5–10 business days.\n`,
    };
  },
  charge_refunded_note: (raw) => {
    const v = noteVars.parse(raw);
    const order = v.orderId ? ` for order ${v.orderId}` : '';
    return {
      subject: 'A charge on your card was refunded',
      text: `Hello,\n\nA charge of ${formatMoney(v)}${order} was made in error and has been refunded in full. You do not need to do anything.\n`,
    };
  },
  email_sent_in_error: (raw) => {
    correctionVars.parse(raw);
    return {
      subject: 'Please disregard our previous email',
      text: 'Hello,\n\nWe sent you an email in error a moment ago. Please disregard it; we apologise for the confusion.\n',
    };
  },
});
