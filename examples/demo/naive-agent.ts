/**
 * The same incident with no harness: the script calls the sandbox's vendor APIs directly with plain
 * `fetch`, the way a tool-calling model with thin tool wrappers would. Nothing here is hard-coded damage;
 * the vendors answer as they answered the harness, under the same faults, and the script behaves as a
 * model does:
 *
 * - a failed or unclear call is retried as a NEW request (reworded arguments, no key for Jira, which has
 *   none, and a fresh Stripe `Idempotency-Key` per attempt, as a naive client generates one per request);
 * - the "rollback" works from its transcript: it closes every ticket and refunds every charge the
 *   transcript says it made, then apologises to the customer for the charge.
 *
 * The faults: Jira's gateway answers 504 after the first ticket was created (as in the harness story), and
 * Stripe's answer to the first charge is lost after the charge was made. In the harness story that loss is
 * the executor SIGKILLed after Stripe answered; here there is no executor, so it is a `reset_after` fault:
 * the charge exists, the caller sees a reset connection.
 */
import { randomUUID } from 'node:crypto';
import { act, answer, aside } from './narration.js';
import { DEFAULT_CREDENTIALS } from '@agent-saga/sandbox';
import type { RunningSandbox } from './sandbox-admin.js';

/** One line of the model's transcript: what it called and what it was told. */
export interface TranscriptEntry {
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** HTTP status, or null when the connection failed. */
  readonly status: number | null;
  readonly body: unknown;
}

export interface NaiveRun {
  readonly transcript: readonly TranscriptEntry[];
  /** Ticket keys the rollback closed, and charges it refunded, as the transcript named them. */
  readonly closed: readonly string[];
  readonly refunded: readonly string[];
  /** Customer addresses the apology went to. */
  readonly apologisedTo: readonly string[];
}

const CUSTOMER = 'cus_sandbox_ada';
const CUSTOMER_EMAIL = 'ada@example.com';

const c = DEFAULT_CREDENTIALS;
const jiraAuth = `Basic ${Buffer.from(`${c.jiraEmail}:${c.jiraApiToken}`).toString('base64')}`;
const adf = (text: string) => ({
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
});

/** Sends one request and writes what came back into the transcript; never throws for the vendor's answer. */
async function callTool(
  transcript: TranscriptEntry[],
  tool: string,
  args: Readonly<Record<string, unknown>>,
  url: string,
  init: RequestInit,
): Promise<TranscriptEntry> {
  let entry: TranscriptEntry;
  try {
    const res = await fetch(url, init);
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      body = text.slice(0, 60).replace(/\s+/g, ' '); // a gateway's HTML page
    }
    entry = { tool, args, status: res.status, body };
  } catch (e) {
    entry = { tool, args, status: null, body: String((e as Error).cause ?? e) };
  }
  transcript.push(entry);
  aside(
    `${tool}(${JSON.stringify(args)}) → ${entry.status ?? 'connection failed'} ${JSON.stringify(entry.body).slice(0, 90)}`,
  );
  return entry;
}

const ok = (e: TranscriptEntry) => e.status !== null && e.status >= 200 && e.status < 300;
/** A model gives up on a definitive refusal (4xx); anything else it tries again, reworded. */
const definitive = (e: TranscriptEntry) => e.status !== null && e.status >= 400 && e.status < 500;

function field(body: unknown, name: string): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const v = (body as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : undefined;
}

/** Plays the incident against the sandbox's vendor APIs directly; the caller has reset the sandbox. */
export async function playNaiveAgent(sandbox: RunningSandbox): Promise<NaiveRun> {
  const { urls } = sandbox;
  const t: TranscriptEntry[] = [];
  const ship = { authorization: `Bearer ${c.shippingApiKey}`, 'content-type': 'application/json' };
  const jira = { authorization: jiraAuth, 'content-type': 'application/json' };
  const stripe = { authorization: `Bearer ${c.stripeSecretKey}` };

  act(1, 'get_order');
  await callTool(t, 'get_order', { orderId: '1182' }, `${urls.shipping}/v1/orders/1182`, { headers: ship });

  act(2, "create_ticket, retried like a model: Jira's gateway answers 504 after creating the ticket");
  await sandbox.addFault({
    vendor: 'jira',
    method: 'POST',
    path: '/rest/api/3/issue',
    nth: 1,
    kind: 'error_after',
  });
  for (const summary of ['Refund for order #1182', 'Order #1182 refund', 'Refund: order 1182']) {
    const e = await callTool(t, 'create_ticket', { summary }, `${urls.jira}/rest/api/3/issue`, {
      method: 'POST',
      headers: jira,
      body: JSON.stringify({ fields: { project: { key: 'SUP' }, issuetype: { name: 'Task' }, summary } }),
    });
    if (ok(e) || definitive(e)) break;
  }

  act(3, 'charge_card, retried like a model: Stripe charges, the answer is lost on the way back');
  await sandbox.addFault({
    vendor: 'stripe',
    method: 'POST',
    path: '/v1/payment_intents',
    nth: 1,
    kind: 'reset_after',
  });
  const customer = await callTool(
    t,
    'get_customer',
    { customerId: CUSTOMER },
    `${urls.stripe}/v1/customers/${CUSTOMER}`,
    {
      headers: stripe,
    },
  );
  const settings = (customer.body as { invoice_settings?: { default_payment_method?: unknown } } | null)
    ?.invoice_settings;
  const paymentMethod =
    typeof settings?.default_payment_method === 'string' ? settings.default_payment_method : '';
  for (let attempt = 1; attempt <= 3; attempt++) {
    const params = new URLSearchParams({
      amount: '4900',
      currency: 'eur',
      customer: CUSTOMER,
      payment_method: paymentMethod,
      confirm: 'true',
      off_session: 'true',
      description: 'Refund order 1182',
    });
    const e = await callTool(
      t,
      'charge_card',
      { amount: 4900, currency: 'eur', attempt },
      `${urls.stripe}/v1/payment_intents`,
      {
        method: 'POST',
        // A fresh key per request: what a client that generates one per call sends.
        headers: {
          ...stripe,
          'content-type': 'application/x-www-form-urlencoded',
          'idempotency-key': randomUUID(),
        },
        body: params,
      },
    );
    if (ok(e) || definitive(e)) break;
  }

  act(4, 'reship: the warehouse refuses (order 1182 is not eligible)');
  await callTool(t, 'reship', { orderId: '1182' }, `${urls.shipping}/v1/shipments`, {
    method: 'POST',
    headers: { ...ship, 'idempotency-key': randomUUID() },
    body: JSON.stringify({
      orderId: '1182',
      items: [{ sku: 'MUG-BLUE', quantity: 1 }],
      reason: 'Replacement for a damaged mug',
    }),
  });

  act(5, 'the model "rolls back" from its transcript');
  const tickets = t
    .filter((e) => e.tool === 'create_ticket' && ok(e))
    .flatMap((e) => field(e.body, 'key') ?? []);
  const charges = t
    .filter((e) => e.tool === 'charge_card' && ok(e))
    .flatMap((e) => field(e.body, 'id') ?? []);
  answer(
    `the transcript says it created tickets ${JSON.stringify(tickets)} and charges ${JSON.stringify(charges)}`,
  );
  const closed: string[] = [];
  for (const key of tickets) {
    const e = await callTool(t, 'close_ticket', { key }, `${urls.jira}/rest/api/3/issue/${key}/transitions`, {
      method: 'POST',
      headers: jira,
      body: JSON.stringify({
        transition: { id: '31' },
        update: { comment: [{ add: { body: adf('Rolled back: the reship was refused.') } }] },
      }),
    });
    if (ok(e)) closed.push(key);
  }
  const refunded: string[] = [];
  for (const id of charges) {
    const e = await callTool(t, 'refund', { paymentIntent: id }, `${urls.stripe}/v1/refunds`, {
      method: 'POST',
      headers: {
        ...stripe,
        'content-type': 'application/x-www-form-urlencoded',
        'idempotency-key': randomUUID(),
      },
      body: new URLSearchParams({ payment_intent: id }),
    });
    if (ok(e)) refunded.push(id);
  }
  const apologisedTo: string[] = [];
  if (charges.length > 0) {
    const e = await callTool(t, 'send_email', { to: CUSTOMER_EMAIL }, `${urls.email}/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.emailApiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        from: 'support@example.com',
        to: CUSTOMER_EMAIL,
        subject: 'Sorry: we refunded the €49.00 we charged you',
        text: 'We charged your card by mistake for order 1182 and have refunded it. We apologise.',
      }),
    });
    if (ok(e)) apologisedTo.push(CUSTOMER_EMAIL);
  }
  return { transcript: t, closed, refunded, apologisedTo };
}
