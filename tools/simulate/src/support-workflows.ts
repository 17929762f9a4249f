/**
 * The support workflows an episode's task is drawn from, as the writes the task needs, in order, with the
 * vendor request each write makes (where a fault is armed) and its arguments as a model would word them.
 *
 * - `refund_and_reship`: open a ticket, charge the replacement, ship it (the seed incident's story).
 * - `refund_with_receipt`: charge with a Stripe receipt to the customer, then open a ticket; undoing it
 *   means the customer saw a charge (agent-saga queues a correction note for a person; it sends nothing).
 * - `ticket_and_reship`: open a ticket, ship the replacement.
 * - `reship_only`: ship the replacement.
 * - `charge_and_reship`: charge and ship, no ticket.
 * - `ticket_and_email`: open a ticket, send the refund confirmation (`send_email`, irreversible: held for
 *   a person's approval in agent-saga; the simulation plays that person, see approve-held-emails.ts).
 * - `full_refund_and_confirm`: ticket, charge, reship, then the confirmation email.
 * - `hold_reship_capture_confirm` (K = 5): ticket, a hold on the card (`authorize_payment`), the reship,
 *   the capture of the hold once the warehouse took the order (`capture_payment`), the confirmation email.
 *   The capture names the PaymentIntent the hold returned (see {@link RefOfWrite}).
 * - `refund_and_reship_pivot`: the same writes around agent-saga's pivot: the ticket and the hold before
 *   it (undoable), then one proposal — capture, reship, email — that a person approves by its hash before
 *   anything irreversible happens (see {@link pivotAt}); the person refuses it when the warehouse will not
 *   take the order (approve-held-emails.ts). The naive harness has no pivot: it just does the writes.
 *
 * K (writes per task) is 1 to 5.
 */
import type { Vendor } from '@agent-saga/sandbox';

export const WriteTool = {
  CREATE_TICKET: 'create_ticket',
  CHARGE_CARD: 'charge_card',
  RESHIP: 'reship',
  SEND_EMAIL: 'send_email',
  AUTHORIZE_PAYMENT: 'authorize_payment',
  CAPTURE_PAYMENT: 'capture_payment',
} as const;
export type WriteTool = (typeof WriteTool)[keyof typeof WriteTool];

export const Workflow = {
  REFUND_AND_RESHIP: 'refund_and_reship',
  REFUND_WITH_RECEIPT: 'refund_with_receipt',
  TICKET_AND_RESHIP: 'ticket_and_reship',
  RESHIP_ONLY: 'reship_only',
  CHARGE_AND_RESHIP: 'charge_and_reship',
  TICKET_AND_EMAIL: 'ticket_and_email',
  FULL_REFUND_AND_CONFIRM: 'full_refund_and_confirm',
  HOLD_RESHIP_CAPTURE_CONFIRM: 'hold_reship_capture_confirm',
  REFUND_AND_RESHIP_PIVOT: 'refund_and_reship_pivot',
} as const;
export type Workflow = (typeof Workflow)[keyof typeof Workflow];
export const WORKFLOWS: readonly Workflow[] = Object.values(Workflow);

const TOOLS_OF = {
  refund_and_reship: [WriteTool.CREATE_TICKET, WriteTool.CHARGE_CARD, WriteTool.RESHIP],
  refund_with_receipt: [WriteTool.CHARGE_CARD, WriteTool.CREATE_TICKET],
  ticket_and_reship: [WriteTool.CREATE_TICKET, WriteTool.RESHIP],
  reship_only: [WriteTool.RESHIP],
  charge_and_reship: [WriteTool.CHARGE_CARD, WriteTool.RESHIP],
  ticket_and_email: [WriteTool.CREATE_TICKET, WriteTool.SEND_EMAIL],
  full_refund_and_confirm: [
    WriteTool.CREATE_TICKET,
    WriteTool.CHARGE_CARD,
    WriteTool.RESHIP,
    WriteTool.SEND_EMAIL,
  ],
  hold_reship_capture_confirm: [
    WriteTool.CREATE_TICKET,
    WriteTool.AUTHORIZE_PAYMENT,
    WriteTool.RESHIP,
    WriteTool.CAPTURE_PAYMENT,
    WriteTool.SEND_EMAIL,
  ],
  refund_and_reship_pivot: [
    WriteTool.CREATE_TICKET,
    WriteTool.AUTHORIZE_PAYMENT,
    WriteTool.CAPTURE_PAYMENT,
    WriteTool.RESHIP,
    WriteTool.SEND_EMAIL,
  ],
} as const satisfies Record<Workflow, readonly WriteTool[]>;

/**
 * Where the pivot of a workflow stands: the index of its first commit step (every write from there on is
 * proposed at once and runs after one approval), or undefined for a workflow without one. Why 2 for
 * `refund_and_reship_pivot`: the ticket and the hold can be undone without a trace of money; the capture
 * takes it and the email cannot be unsent, and the reship is committed with them, after the person saw
 * the order.
 */
export function pivotAt(workflow: Workflow): number | undefined {
  return workflow === Workflow.REFUND_AND_RESHIP_PIVOT ? 2 : undefined;
}

/** The ids one episode owns in the vendors: every effect of the episode carries its tag. */
export interface EpisodeIds {
  /** Fixed width (`s<seed>n<00042>`), so no episode's tag is a prefix of another's. */
  readonly tag: string;
  readonly orderId: string;
  readonly customerId: string;
  readonly email: string;
  readonly sku: string;
}

export function episodeIds(seed: number, index: number, sku: string): EpisodeIds {
  const tag = `s${seed}n${String(index).padStart(6, '0')}`;
  return { tag, orderId: tag, customerId: `cus_${tag}`, email: `${tag}@example.com`, sku };
}

/** The email template of the confirmation (the default registry's), and the subject it renders. */
export const CONFIRMATION_TEMPLATE = 'refund_confirmation';
export const confirmationSubject = (ids: EpisodeIds): string => `Your refund for order ${ids.orderId}`;

/** Why 4900: the story's replacement price, in cents. */
export const CHARGE_AMOUNT = 4_900;
export const CHARGE_CURRENCY = 'eur';

/** The request of a write that a fault at the vendor boundary hits. */
export interface VendorRequest {
  readonly vendor: Vendor;
  readonly method: 'POST';
  readonly path: string;
  /**
   * Whether the request carries the episode's tag (in its URL or body), which scopes a fault to the
   * episode. A capture does not: its URL names a PaymentIntent id and its body a key, so no fault is
   * drawn for it.
   */
  readonly tagged: boolean;
}

const REQUEST_OF: Readonly<Record<WriteTool, VendorRequest>> = {
  create_ticket: { vendor: 'jira', method: 'POST', path: '/rest/api/3/issue', tagged: true },
  charge_card: { vendor: 'stripe', method: 'POST', path: '/v1/payment_intents', tagged: true },
  reship: { vendor: 'shipping', method: 'POST', path: '/v1/shipments', tagged: true },
  send_email: { vendor: 'email', method: 'POST', path: '/emails', tagged: true },
  authorize_payment: { vendor: 'stripe', method: 'POST', path: '/v1/payment_intents', tagged: true },
  capture_payment: {
    vendor: 'stripe',
    method: 'POST',
    path: '/v1/payment_intents/:id/capture',
    tagged: false,
  },
};

/** Whether the vendor deduplicates this write by a key (Jira has no idempotency at all). */
export const KEYED: Readonly<Record<WriteTool, boolean>> = {
  create_ticket: false,
  charge_card: true,
  reship: true,
  send_email: true,
  authorize_payment: true,
  capture_payment: true,
};

/**
 * An argument that names what an earlier write returned (the capture's PaymentIntent is the hold's id):
 * the agent fills it in from what it knows — agent-saga's port from the log, the naive one from the
 * answer it was given (see {@link resolveRefs}).
 */
export interface RefOfWrite {
  readonly refOfWrite: number;
}
const isRefOfWrite = (v: unknown): v is RefOfWrite =>
  typeof v === 'object' && v !== null && typeof (v as { refOfWrite?: unknown }).refOfWrite === 'number';

/**
 * The arguments with every {@link RefOfWrite} replaced by the id `refOf` gives, or null when one is not
 * known (a hold taken for done on a timeout has no id to capture).
 */
export function resolveRefs(
  args: Readonly<Record<string, unknown>>,
  refOf: (write: number) => string | null,
): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (!isRefOfWrite(v)) {
      out[k] = v;
      continue;
    }
    const ref = refOf(v.refOfWrite);
    if (ref === null) return null;
    out[k] = ref;
  }
  return out;
}

export interface PlannedWrite {
  readonly tool: WriteTool;
  readonly request: VendorRequest;
  /**
   * The arguments of the `attempt`-th call (1-based). `reworded`: a model that words every retry anew —
   * other text, the keys in another order, a harmless optional field the schema allows. The tool's identity
   * (order, customer, amount) never changes.
   */
  args(attempt: number, reworded: boolean): Record<string, unknown>;
}

const WORDING = ['', ' (again)', ', as discussed', ' - retry', ' asap', ' (follow-up)'];
const wording = (attempt: number, reworded: boolean) =>
  reworded ? (WORDING[(attempt - 1) % WORDING.length] ?? '') : '';

function argsOf(tool: WriteTool, ids: EpisodeIds, workflow: Workflow) {
  const holdAt = (TOOLS_OF[workflow] as readonly WriteTool[]).indexOf(WriteTool.AUTHORIZE_PAYMENT);
  return (attempt: number, reworded: boolean): Record<string, unknown> => {
    const w = wording(attempt, reworded);
    const extra = reworded && attempt > 1;
    switch (tool) {
      case WriteTool.CREATE_TICKET:
        return extra
          ? {
              orderId: ids.orderId,
              description: `Customer asked${w}`,
              summary: `Order #${ids.orderId}: refund${w}`,
            }
          : { summary: `Refund for order #${ids.orderId}`, orderId: ids.orderId };
      case WriteTool.AUTHORIZE_PAYMENT:
        return extra
          ? {
              reason: `Hold for the replacement, order ${ids.orderId}${w}`,
              currency: CHARGE_CURRENCY,
              amount: CHARGE_AMOUNT,
              customerId: ids.customerId,
            }
          : {
              customerId: ids.customerId,
              amount: CHARGE_AMOUNT,
              currency: CHARGE_CURRENCY,
              reason: `Hold for the replacement of order ${ids.orderId}`,
            };
      case WriteTool.CAPTURE_PAYMENT: {
        // The capture's only argument is the hold's id: a reworded retry has nothing else to change.
        const ref: RefOfWrite = { refOfWrite: holdAt };
        return { paymentIntent: ref };
      }
      case WriteTool.CHARGE_CARD: {
        const receipt = workflow === Workflow.REFUND_WITH_RECEIPT ? { receiptEmail: ids.email } : {};
        return extra
          ? {
              reason: `Replacement, order ${ids.orderId}${w}`,
              currency: CHARGE_CURRENCY,
              amount: CHARGE_AMOUNT,
              customerId: ids.customerId,
              ...receipt,
            }
          : {
              customerId: ids.customerId,
              amount: CHARGE_AMOUNT,
              currency: CHARGE_CURRENCY,
              reason: `Replacement for order ${ids.orderId}`,
              ...receipt,
            };
      }
      case WriteTool.RESHIP:
        return extra
          ? {
              reason: `Replacement for order ${ids.orderId}${w}`,
              items: [{ quantity: 1, sku: ids.sku }],
              orderId: ids.orderId,
            }
          : {
              orderId: ids.orderId,
              items: [{ sku: ids.sku, quantity: 1 }],
              reason: `Replacement for order ${ids.orderId}`,
            };
      case WriteTool.SEND_EMAIL: {
        const vars = { orderId: ids.orderId, amount: CHARGE_AMOUNT, currency: CHARGE_CURRENCY };
        return extra
          ? {
              vars: { ...vars, customerName: `Customer${w}` },
              template: CONFIRMATION_TEMPLATE,
              to: ids.email,
            }
          : { to: ids.email, template: CONFIRMATION_TEMPLATE, vars };
      }
      default: {
        const never: never = tool;
        throw new Error(`unknown write ${String(never)}`);
      }
    }
  };
}

/** The writes the task of `workflow` needs for one episode, in order. */
export function writesOf(workflow: Workflow, ids: EpisodeIds): readonly PlannedWrite[] {
  return TOOLS_OF[workflow].map((tool) => ({
    tool,
    request: REQUEST_OF[tool],
    args: argsOf(tool, ids, workflow),
  }));
}

/** Whether the workflow has a reship, the write the warehouse may refuse (then the task must be undone). */
export const hasReship = (workflow: Workflow): boolean =>
  (TOOLS_OF[workflow] as readonly WriteTool[]).includes(WriteTool.RESHIP);

/** Whether the workflow's money is a hold and its capture (a hold left after an undo is an effect left standing). */
export const holdsPayment = (workflow: Workflow): boolean =>
  (TOOLS_OF[workflow] as readonly WriteTool[]).includes(WriteTool.AUTHORIZE_PAYMENT);

/** Whether the charge of this workflow sends the customer a receipt (they then know of it). */
export const sendsReceipt = (workflow: Workflow): boolean => workflow === Workflow.REFUND_WITH_RECEIPT;
