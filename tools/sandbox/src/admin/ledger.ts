import type { EmailState } from '../email/email-state.js';
import type { JiraState } from '../jira/jira-state.js';
import { statusDef } from '../jira/workflow.js';
import type { ShippingState } from '../shipping/shipping-state.js';
import type { StripeState } from '../stripe/stripe-state.js';

/** The vendor states the ledger reads. */
export interface LedgerSources {
  readonly stripe: StripeState;
  readonly jira: JiraState;
  readonly email: EmailState;
  readonly shipping: ShippingState;
}

/** The plain text of an ADF document (text nodes joined), so tests can read comments without walking ADF. */
export function adfText(node: unknown): string {
  if (typeof node !== 'object' || node === null) return '';
  const n = node as { type?: unknown; text?: unknown; content?: unknown };
  if (n.type === 'text' && typeof n.text === 'string') return n.text;
  if (!Array.isArray(n.content)) return '';
  const sep = n.type === 'doc' ? '\n' : '';
  return n.content.map(adfText).join(sep);
}

/**
 * Every effect that exists in the four systems, oldest first, so a test counts net effects rather than
 * calls: payment intents (declined ones too: they exist, with no money moved), refunds, Jira issues with
 * status, labels and comments (deleted issues are gone), emails sent, shipments. `idempotencyKey` is the
 * key the creating request carried, when it carried one.
 */
export function buildLedger(sources: LedgerSources) {
  const { stripe, jira, email, shipping } = sources;
  return {
    stripe: {
      paymentIntents: [...stripe.paymentIntents.values()].map((pi) => {
        const charge = pi.latest_charge === null ? undefined : stripe.charges.get(pi.latest_charge);
        return {
          id: pi.id,
          status: pi.status,
          amount: pi.amount,
          amount_received: pi.amount_received,
          amount_capturable: pi.amount_capturable,
          amount_refunded: charge?.amount_refunded ?? 0,
          currency: pi.currency,
          customer: pi.customer,
          capture_method: pi.capture_method,
          description: pi.description,
          receipt_email: pi.receipt_email,
          metadata: { ...pi.metadata },
          idempotencyKey: stripe.createdWithKey.get(pi.id) ?? null,
        };
      }),
      refunds: [...stripe.refunds.values()].map((r) => ({
        id: r.id,
        payment_intent: r.payment_intent,
        charge: r.charge,
        amount: r.amount,
        status: r.status,
        metadata: { ...r.metadata },
        idempotencyKey: stripe.createdWithKey.get(r.id) ?? null,
      })),
    },
    jira: {
      issues: [...jira.issues.values()].map((issue) => ({
        id: issue.id,
        key: issue.key,
        summary: issue.summary,
        status: issue.status,
        statusCategory: statusDef(issue.status).category,
        labels: [...issue.labels],
        comments: issue.comments.map((c) => ({ id: c.id, text: adfText(c.body), body: c.body })),
      })),
    },
    email: {
      emails: [...email.emails.values()].map((e) => ({
        id: e.id,
        from: e.from,
        to: [...e.to],
        subject: e.subject,
        tags: e.tags.map((t) => ({ ...t })),
        created_at: e.created_at,
        idempotencyKey: email.sentWithKey.get(e.id) ?? null,
      })),
    },
    shipping: {
      shipments: [...shipping.shipments.values()].map((s) => structuredClone(s)),
    },
  };
}
export type Ledger = ReturnType<typeof buildLedger>;
