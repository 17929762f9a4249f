/**
 * The fault modes an episode draws at the vendor boundary, each turned into a sandbox fault
 * (docs/sandbox.md, "Faults") on one write of the episode: hit once (`nth: 1`) and scoped to the
 * episode's own requests (`contains: <tag>`), so concurrent episodes never share a fault.
 *
 * | mode                | the vendor…                                                                      |
 * | ------------------- | -------------------------------------------------------------------------------- |
 * | `none`              | answers normally (the control)                                                   |
 * | `lost_ack`          | commits, then resets the connection (`reset_after`)                              |
 * | `misleading_500`    | commits, then answers 500 with its error body (`error_after`)                    |
 * | `late_commit_fixed` | holds the request past the client's timeout, then commits (`delay`, fixed)       |
 * | `late_commit_heavy` | the same with a heavy-tailed hold (Pareto, α 1.2, capped at 12 s)                |
 * | `redelivery`        | receives the request twice, as a resending transport (`redeliver`, keyed writes) |
 * | `rate_limited`      | answers 429 without processing (`status`)                                        |
 * | `slow_vendor`       | holds the request for half the client's timeout, then answers (`delay`)          |
 * | `dropped`           | closes the connection before processing: nothing happened (`drop`)               |
 * | `search_lag`        | commits then resets, on a write whose only read-back is a lagging search index   |
 * | `stale_read`        | commits then answers 500, and the first read-back by the step's key is stale: an |
 * |                     | empty result, as a replica behind the primary (`status` 200, the vendor's shape) |
 * | `partial_batch`     | runs part of the request and answers 500: a PaymentIntent created with `confirm`  |
 * |                     | is created, its confirmation never runs (`partial_batch`, `omit: ['confirm']`);  |
 * |                     | Stripe saves the 500 under the key, so a keyed retry is told the same            |
 * | `executor_killed`   | commits and answers, and holds the answer (`delay` after processing) while the   |
 * |                     | harness SIGKILLs the process that sent it and restarts it (agent-saga-stack.ts)  |
 * | `api_restart`       | the same hold, while the harness SIGKILLs the api the agent's call waits on      |
 *
 * Why `partial_batch` on a PaymentIntent: no connector call carries several items the vendor may commit
 * one by one (a shipment's items are one warehouse record), and a charge is the nearest honest
 * equivalent: one request that does two things, create and confirm, of which the first can stand alone.
 *
 * The process modes need a harness with processes to kill. For the naive harness they are its own process
 * crash at the same moment, after the vendor answered: its transcript loses the write and the resumed agent
 * redoes it (as `resume_after_crash`; naive-harness.ts).
 *
 * Why `redelivery` only on keyed writes: against Jira, which has no idempotency, a resending transport
 * doubles the ticket whatever the client does (the sandbox's own test shows it); that is the vendor's
 * contract, not a harness's, so it is not a fair episode for either harness.
 */
import type { FaultSpecInput } from '@agent-saga/sandbox';
import type { Random } from '../../../test/soak/seeded-random.js';
import { KEYED, WriteTool, type PlannedWrite } from './support-workflows.js';
import { clientTimeoutMs, LATE_BY_MS, LATE_COMMIT_MAX_MS } from './sim-timings.js';

export const FaultMode = {
  NONE: 'none',
  LOST_ACK: 'lost_ack',
  MISLEADING_500: 'misleading_500',
  LATE_COMMIT_FIXED: 'late_commit_fixed',
  LATE_COMMIT_HEAVY: 'late_commit_heavy',
  REDELIVERY: 'redelivery',
  RATE_LIMITED: 'rate_limited',
  SLOW_VENDOR: 'slow_vendor',
  DROPPED: 'dropped',
  SEARCH_LAG: 'search_lag',
  STALE_READ: 'stale_read',
  PARTIAL_BATCH: 'partial_batch',
  EXECUTOR_KILLED: 'executor_killed',
  API_RESTART: 'api_restart',
} as const;
export type FaultMode = (typeof FaultMode)[keyof typeof FaultMode];
export const FAULT_MODES: readonly FaultMode[] = Object.values(FaultMode);

/**
 * The read-back of each write by its key, and the empty answer a stale replica gives it: Jira's enhanced
 * search, Stripe's PaymentIntent search, the warehouse's list by idempotency key (what each connector's
 * lookup calls). None for the email: its lookup lists recent emails, with no key in the request to scope to.
 */
const STALE_READ_OF: Readonly<
  Partial<Record<WriteTool, Omit<FaultSpecInput, 'kind' | 'contains' | 'nth'> & { body: unknown }>>
> = {
  create_ticket: {
    vendor: 'jira',
    method: 'POST',
    path: '/rest/api/3/search/jql',
    body: { issues: [], isLast: true },
  },
  charge_card: {
    vendor: 'stripe',
    method: 'GET',
    path: '/v1/payment_intents/search',
    body: {
      object: 'search_result',
      data: [],
      has_more: false,
      next_page: null,
      url: '/v1/payment_intents/search',
    },
  },
  reship: { vendor: 'shipping', method: 'GET', path: '/v1/shipments', body: { object: 'list', data: [] } },
};

/**
 * What the harness does when a process mode's fault holds an answer, named in the fault's `note` (the
 * stack watches for it): SIGKILL the process that sent the request, or the api.
 */
export const ProcessFault = { KILL_SENDER: 'kill:sender', KILL_API: 'kill:api' } as const;
export type ProcessFault = (typeof ProcessFault)[keyof typeof ProcessFault];

/** Whether a mode is a process fault (the harness's own crash), as opposed to the vendor's. */
export const isProcessMode = (mode: FaultMode): boolean =>
  mode === FaultMode.EXECUTOR_KILLED || mode === FaultMode.API_RESTART;

/** Whether a mode can be drawn for a write. */
export function appliesTo(mode: FaultMode, write: PlannedWrite): boolean {
  // A fault is scoped to the episode by its tag; a request without it (a capture) cannot be aimed at.
  if (!write.request.tagged) return mode === FaultMode.NONE;
  if (mode === FaultMode.PARTIAL_BATCH)
    return write.tool === WriteTool.CHARGE_CARD || write.tool === WriteTool.AUTHORIZE_PAYMENT;
  if (mode === FaultMode.REDELIVERY) return KEYED[write.tool];
  if (mode === FaultMode.SEARCH_LAG)
    return write.tool === WriteTool.CREATE_TICKET || write.tool === WriteTool.CHARGE_CARD;
  // The email lookup lists recent emails and reads their tags: its requests carry no key to scope to.
  if (mode === FaultMode.STALE_READ) return STALE_READ_OF[write.tool] !== undefined;
  return true;
}

/** One fault of an episode: which write it hits, and the delay drawn for it (delay modes only). */
export interface EpisodeFault {
  readonly mode: FaultMode;
  /** Index into the episode's writes. */
  readonly write: number;
  readonly delayMs?: number;
}

/**
 * Why half the client's timeout: the answer is held long enough for the harness to kill the process
 * that waits for it (it polls every 50 ms), and short enough that a living client would have read it.
 */
const holdMs = (write: PlannedWrite): number => Math.round(clientTimeoutMs(write.request.vendor) / 2);

/** Draws the delay of a delay mode for `write` (seeded), or undefined for the other modes. */
export function drawDelayMs(mode: FaultMode, write: PlannedWrite, random: Random): number | undefined {
  const timeout = clientTimeoutMs(write.request.vendor);
  switch (mode) {
    case FaultMode.LATE_COMMIT_FIXED:
      return timeout + LATE_BY_MS;
    case FaultMode.LATE_COMMIT_HEAVY: {
      // Pareto with α 1.2 and scale 500 ms, past the timeout: most a little late, a few very late.
      const tail = 500 * (Math.pow(1 - random.next(), -1 / 1.2) - 1);
      return Math.round(Math.min(timeout + LATE_BY_MS + tail, LATE_COMMIT_MAX_MS));
    }
    case FaultMode.SLOW_VENDOR:
      return Math.round(timeout / 2);
    case FaultMode.EXECUTOR_KILLED:
    case FaultMode.API_RESTART:
      return holdMs(write);
    default:
      return undefined;
  }
}

/** The error body each vendor answers with, so a 500 or a 429 looks like the vendor's own. */
function vendorError(vendor: string, status: number): unknown {
  const message = status === 429 ? 'Too many requests' : 'An unexpected error occurred';
  switch (vendor) {
    case 'stripe':
      return {
        error: {
          type: status === 429 ? 'rate_limit_error' : 'api_error',
          message,
          code: status === 429 ? 'rate_limit' : undefined,
        },
      };
    case 'jira':
      return { errorMessages: [message], errors: {} };
    default:
      return { error: { code: status === 429 ? 'rate_limited' : 'internal_error', message } };
  }
}

/**
 * The sandbox faults that play `fault` on `write` of the episode tagged `tag` (none for `none`).
 * `lookupKey`: the key the harness's read-back of this write searches by (a stale read is scoped to it); a
 * harness that never reads back is simply never hit by it.
 */
export function faultSpecsOf(
  fault: EpisodeFault,
  write: PlannedWrite,
  tag: string,
  lookupKey: string,
): readonly FaultSpecInput[] {
  const { vendor, method, path } = write.request;
  const base = { vendor, method, path, contains: tag, nth: 1 } as const;
  if (fault.mode === FaultMode.STALE_READ) {
    const read = STALE_READ_OF[write.tool];
    if (read === undefined) return [];
    return [
      { ...base, kind: 'error_after', status: 500, body: vendorError(vendor, 500) },
      { ...read, contains: lookupKey, nth: 1, kind: 'status', status: 200 },
    ];
  }
  const one = faultSpecOf(fault, write, tag);
  return one === null ? [] : [one];
}

function faultSpecOf(fault: EpisodeFault, write: PlannedWrite, tag: string): FaultSpecInput | null {
  const { vendor, method, path } = write.request;
  const base = { vendor, method, path, contains: tag, nth: 1 } as const;
  switch (fault.mode) {
    case FaultMode.NONE:
    case FaultMode.STALE_READ:
      return null;
    case FaultMode.LOST_ACK:
    case FaultMode.SEARCH_LAG:
      return { ...base, kind: 'reset_after' };
    case FaultMode.MISLEADING_500:
      return { ...base, kind: 'error_after', status: 500, body: vendorError(vendor, 500) };
    case FaultMode.LATE_COMMIT_FIXED:
    case FaultMode.LATE_COMMIT_HEAVY:
    case FaultMode.SLOW_VENDOR:
      return { ...base, kind: 'delay', delayMs: fault.delayMs ?? 0 };
    case FaultMode.REDELIVERY:
      return { ...base, kind: 'redeliver' };
    case FaultMode.RATE_LIMITED:
      return {
        ...base,
        kind: 'status',
        status: 429,
        body: vendorError(vendor, 429),
        headers: { 'retry-after': '1' },
      };
    case FaultMode.DROPPED:
      return { ...base, kind: 'drop' };
    case FaultMode.PARTIAL_BATCH:
      return {
        ...base,
        kind: 'partial_batch',
        omit: ['confirm'],
        status: 500,
        body: vendorError(vendor, 500),
      };
    case FaultMode.EXECUTOR_KILLED:
    case FaultMode.API_RESTART:
      return {
        ...base,
        kind: 'delay',
        phase: 'after_processing',
        delayMs: fault.delayMs ?? holdMs(write),
        note: fault.mode === FaultMode.EXECUTOR_KILLED ? ProcessFault.KILL_SENDER : ProcessFault.KILL_API,
      };
    default: {
      const never: never = fault.mode;
      throw new Error(`unknown fault mode ${String(never)}`);
    }
  }
}
