/**
 * Splits the sandbox's ledger by episode tag, once, so grading 10,000 episodes reads each effect once
 * instead of scanning the whole ledger per episode. An effect is an episode's by the tag it carries (see
 * grade-episode.ts); one that carries none (the sandbox's default seed) is dropped. Grading a part gives
 * the same grade as grading the whole ledger.
 */
import type { GradingLedger } from './grade-episode.js';

/** Why this pattern: `episodeIds` makes every tag `s<seed>n<six digits>`. */
const TAG = /s\d+n\d{6}/;

type Part = {
  stripe: {
    paymentIntents: GradingLedger['stripe']['paymentIntents'][number][];
    refunds: GradingLedger['stripe']['refunds'][number][];
  };
  jira: { issues: GradingLedger['jira']['issues'][number][] };
  email: { emails: GradingLedger['email']['emails'][number][] };
  shipping: { shipments: GradingLedger['shipping']['shipments'][number][] };
};

export function partitionLedger(ledger: GradingLedger): ReadonlyMap<string, GradingLedger> {
  const parts = new Map<string, Part>();
  const part = (text: string | null | undefined): Part | undefined => {
    const tag = text?.match(TAG)?.[0];
    if (tag === undefined) return undefined;
    let p = parts.get(tag);
    if (!p) {
      p = {
        stripe: { paymentIntents: [], refunds: [] },
        jira: { issues: [] },
        email: { emails: [] },
        shipping: { shipments: [] },
      };
      parts.set(tag, p);
    }
    return p;
  };
  const tagOfPi = new Map<string, string>();
  for (const pi of ledger.stripe.paymentIntents) {
    part(pi.customer)?.stripe.paymentIntents.push(pi);
    if (pi.customer) tagOfPi.set(pi.id, pi.customer);
  }
  for (const r of ledger.stripe.refunds) part(tagOfPi.get(r.payment_intent ?? ''))?.stripe.refunds.push(r);
  for (const i of ledger.jira.issues) part(i.summary)?.jira.issues.push(i);
  for (const e of ledger.email.emails) part(e.to.join(','))?.email.emails.push(e);
  for (const s of ledger.shipping.shipments) part(s.orderId)?.shipping.shipments.push(s);
  return parts;
}

const EMPTY: GradingLedger = {
  stripe: { paymentIntents: [], refunds: [] },
  jira: { issues: [] },
  email: { emails: [] },
  shipping: { shipments: [] },
};

/** The part of `tag`, or an empty ledger when the episode left no effect at all. */
export const partOf = (parts: ReadonlyMap<string, GradingLedger>, tag: string): GradingLedger =>
  parts.get(tag) ?? EMPTY;
