/**
 * The business invariant of `refund_and_reship`, checked against Stripe and the warehouse before a run of
 * it ends (`checkRunInvariant`): **either** a confirmed reship with exactly one charge not refunded (the
 * customer paid once and the replacement is on its way), **or** no live shipment and no net charge
 * (nothing shipped, nothing kept). Anything else (a refunded charge beside a live reship, a shipment a
 * person made by hand after the unwind, a second charge) fails, naming what the systems show.
 *
 * Read from the vendors, never from the log alone: the log says what the run did, the vendors say what
 * holds now (a person may have refunded or shipped by hand meanwhile). Every read is consistent at once
 * (retrieve and list, never Stripe's lagging search).
 */
import {
  StepStatus,
  type InvariantLookups,
  type InvariantRun,
  type InvariantStep,
  type InvariantVerdict,
} from '@agent-saga/core';
import { z } from 'zod';

const chargeSchema = z.object({ id: z.string(), amountReceived: z.number() });
const refundsSchema = z.array(
  z.object({ id: z.string(), amount: z.number(), status: z.string().nullable() }),
);
const shipmentsSchema = z.array(z.object({ id: z.string(), status: z.string(), orderId: z.string() }));

/** Refund statuses that give money back, or will: `pending` counts, or a refund in flight would be missed. */
const GIVING_BACK = new Set(['succeeded', 'pending', 'requires_action']);
/** The one shipment status that is not live (the sandbox's and the warehouse API's `canceled`). */
const CANCELED = 'canceled';

/** One charge of the run as Stripe shows it now. */
interface ChargeNow {
  readonly id: string;
  readonly received: number;
  readonly refunded: number;
}

/** The run's charges (its CONFIRMED `charge_card` steps), each with what it took and what went back. */
async function chargesOf(run: InvariantRun, lookups: InvariantLookups): Promise<ChargeNow[]> {
  const ids = confirmed(run, 'charge_card')
    .map((s) => s.externalRef)
    .filter((id): id is string => id !== null);
  return Promise.all(
    ids.map(async (id) => {
      const charge = chargeSchema.parse(await call(lookups, 'charge', id));
      const refunds = refundsSchema.parse(await call(lookups, 'refundsOf', id));
      const refunded = refunds
        .filter((r) => r.status !== null && GIVING_BACK.has(r.status))
        .reduce((sum, r) => sum + r.amount, 0);
      return { id: charge.id, received: charge.amountReceived, refunded };
    }),
  );
}

/** Every order the run named (`orderId` of any step), and the shipments of each, whoever made them. */
async function shipmentsOf(run: InvariantRun, lookups: InvariantLookups) {
  const orders = [
    ...new Set(run.steps.map((s) => s.args.orderId).filter((o): o is string => typeof o === 'string')),
  ];
  const lists = await Promise.all(
    orders.map(async (o) => shipmentsSchema.parse(await call(lookups, 'shipmentsOf', o))),
  );
  return lists.flat();
}

/** `refund_and_reship`'s invariant (see the module's header). */
export async function refundAndReshipInvariant(
  run: InvariantRun,
  lookups: InvariantLookups,
): Promise<InvariantVerdict> {
  const [charges, shipments] = await Promise.all([chargesOf(run, lookups), shipmentsOf(run, lookups)]);
  const live = shipments.filter((s) => s.status !== CANCELED);
  const net = charges.filter((c) => c.received - c.refunded > 0);

  const forward = ((): string | null => {
    const reships = confirmed(run, 'reship');
    if (reships.length === 0) return 'no confirmed reship';
    const liveReship = reships.some((s) => live.some((l) => l.id === s.externalRef));
    if (!liveReship)
      return `the reship's shipment ${reships.map((s) => s.externalRef ?? '?').join(', ')} is not live`;
    const whole = charges.filter((c) => c.received > 0 && c.refunded === 0);
    if (whole.length !== 1 || net.length !== 1)
      return `${whole.length} charge(s) not refunded (${describe(charges)}), not exactly one`;
    return null;
  })();
  if (forward === null) return { holds: true };

  const none = ((): string | null => {
    const problems = [
      ...live.map((s) => `shipment ${s.id} of order ${s.orderId} is live (status ${s.status})`),
      ...net.map((c) => `charge ${c.id} keeps ${c.received - c.refunded} of ${c.received} (not refunded)`),
    ];
    return problems.length ? problems.join('; ') : null;
  })();
  if (none === null) return { holds: true };
  return {
    holds: false,
    clause:
      `neither a confirmed reship with exactly one charge not refunded (${forward}) ` +
      `nor no live shipment and no net charge (${none})`,
  };
}

function confirmed(run: InvariantRun, tool: string): InvariantStep[] {
  return run.steps.filter((s) => s.tool === tool && s.status === StepStatus.CONFIRMED);
}

function describe(charges: readonly ChargeNow[]): string {
  return charges.length
    ? charges.map((c) => `${c.id}: ${c.received} received, ${c.refunded} refunded`).join('; ')
    : 'no charge';
}

/** Calls a named lookup; one the module lacks rejects (the check then decides nothing). */
function call(lookups: InvariantLookups, name: string, id: string): Promise<unknown> {
  const fn = lookups[name];
  if (!fn) return Promise.reject(new Error(`no lookup ${name}`));
  return fn(id);
}
