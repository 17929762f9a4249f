/**
 * The support task every integration example plays: what its agent is told, the scripted model's plan (read
 * the order, open a ticket whose answer is lost, replan it in other words, charge the card, email Ada), and
 * the scripted model's patience with an outcome that is not known yet.
 */

/** The support task every example plays: what its agent is told, and what the scripted model says at the end. */
export const SUPPORT_TASK = {
  /** The user's request. */
  request:
    'Order 1183 (customer cus_sandbox_ada, ada@example.com) arrived broken. Open a support ticket, refund ' +
    'the 49.00 EUR by charging the card as a credit, and email Ada the refund confirmation.',
  /** The system prompt. */
  instructions:
    'You are a support agent. Tools go through agent-saga: when a result says the outcome is not known ' +
    'yet, call the same tool again with the same arguments; when it is refused, follow its whatToDo.',
  /** The scripted model's closing words, once its plan is done. */
  scriptedAnswer: 'Ticket opened, refund charged, Ada emailed once approved.',
} as const;

/** One tool call of the scripted plan. */
export interface PlannedCall {
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/** The calls of the support task, by name, for stories that make some of them. */
export const PLANNED_CALLS = {
  getOrder: { tool: 'get_order', args: { orderId: '1183' } },
  createTicket: { tool: 'create_ticket', args: { summary: 'Refund for order #1183', orderId: '1183' } },
  /** The ticket again in other words: the harness refuses it as DUPLICATE_OPERATION of the first. */
  replannedTicket: {
    tool: 'create_ticket',
    args: { summary: 'Order 1183 arrived broken: refund', orderId: '1183' },
  },
  chargeCard: {
    tool: 'charge_card',
    args: { customerId: 'cus_sandbox_ada', amount: 4900, currency: 'eur', reason: 'Refund order 1183' },
  },
  /** Irreversible and customer-facing: held for an operator's approval. */
  sendEmail: {
    tool: 'send_email',
    args: {
      to: 'ada@example.com',
      template: 'refund_confirmation',
      vars: { amount: 4900, currency: 'eur', orderId: '1183' },
    },
  },
} as const satisfies Record<string, PlannedCall>;

/**
 * The scripted model's plan: read the order, open a ticket (its answer is lost: UNKNOWN, asked again),
 * replan the ticket in other words (refused), charge the card, email Ada (held for an operator).
 */
export const SUPPORT_PLAN: readonly PlannedCall[] = [
  PLANNED_CALLS.getOrder,
  PLANNED_CALLS.createTicket,
  PLANNED_CALLS.replannedTicket,
  PLANNED_CALLS.chargeCard,
  PLANNED_CALLS.sendEmail,
];

/**
 * Why 300 ms: a real model takes a while before it repeats a call whose outcome was not known; without a
 * pause the retries would only count the lag. Short, so that the example is quick: the outcome settles
 * after the lag and a reconciler sweep whatever the pause, the pause only sets how often the model asks.
 */
const THINK_MS = 300;
/** The statuses that say "not known yet": the scripted model asks again, as the result tells it to. */
const NOT_YET = new Set(['UNKNOWN', 'INTENDED', 'AWAITING_APPROVAL', 'UNAVAILABLE']);

/**
 * The scripted model's next call, given the status of the tool result it just read (undefined for none):
 * the same call again while the outcome is not known, otherwise the next step of the plan; undefined once
 * the plan is done.
 */
export function scriptedPlan(
  plan: readonly PlannedCall[] = SUPPORT_PLAN,
): (lastStatus: string | undefined) => Promise<PlannedCall | undefined> {
  let next = 0;
  return async (lastStatus) => {
    if (next > 0 && NOT_YET.has(lastStatus ?? '')) {
      await new Promise((r) => setTimeout(r, THINK_MS));
      return plan[next - 1];
    }
    return plan[next++];
  };
}
