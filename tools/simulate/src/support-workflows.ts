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
 *
 * K (writes per task) is 1 to 4. Remaining from the issue: the pivot with approval.
 */
import type { Vendor } from '@agent-saga/sandbox';

export const WriteTool = {
  CREATE_TICKET: 'create_ticket',
  CHARGE_CARD: 'charge_card',
  RESHIP: 'reship',
  SEND_EMAIL: 'send_email',
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
} as const satisfies Record<Workflow, readonly WriteTool[]>;

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
}

const REQUEST_OF: Readonly<Record<WriteTool, VendorRequest>> = {
  create_ticket: { vendor: 'jira', method: 'POST', path: '/rest/api/3/issue' },
  charge_card: { vendor: 'stripe', method: 'POST', path: '/v1/payment_intents' },
  reship: { vendor: 'shipping', method: 'POST', path: '/v1/shipments' },
  send_email: { vendor: 'email', method: 'POST', path: '/emails' },
};

/** Whether the vendor deduplicates this write by a key (Jira has no idempotency at all). */
export const KEYED: Readonly<Record<WriteTool, boolean>> = {
  create_ticket: false,
  charge_card: true,
  reship: true,
  send_email: true,
};

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

/** Whether the charge of this workflow sends the customer a receipt (they then know of it). */
export const sendsReceipt = (workflow: Workflow): boolean => workflow === Workflow.REFUND_WITH_RECEIPT;
