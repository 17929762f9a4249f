import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import { stepSettledChannel } from '../db/channels.js';
import { compareAndSet } from '../db/compare-and-set.js';
import type { StepRow } from '../db/schema.js';
import type { StepPatch } from './step-row-columns.js';
import { InvalidTransitionError } from '../errors/errors.js';
import { SETTLED_STEP_STATUSES, StepStatus } from './step-status.js';
import { StepEventKind } from './step-event-kind.js';
import { STEP_TRANSITIONS } from './step-transitions.js';
import { appendStepEvent } from './append-event.js';

export interface TransitionInput {
  readonly runId: string;
  readonly stepIdx: number;
  readonly to: StepStatus;
  /** Why: `executor: tool returned`, `lookup: found`, `lease expired`, … */
  readonly cause: string;
  readonly detail?: Record<string, unknown>;
  /** Other columns to set with the status (never `status` itself). */
  readonly patch?: Omit<StepPatch, 'status' | 'updated_at'>;
  /** Narrows the allowed sources further (e.g. only INTENDED held by this lease owner). */
  readonly onlyFrom?: readonly StepStatus[];
  /** Extra guard: the row's lease owner must be this. */
  readonly leaseOwner?: string;
  /** The schema name, to announce a settled outcome on its NOTIFY channel. */
  readonly schema: string;
  /** Who moved it, when a person did (an approval, a case resolved by hand). */
  readonly actor?: string | null;
}

/**
 * Moves one step to `to` by compare-and-set (`compareAndSet`) on the legal sources of `STEP_TRANSITIONS`
 * (see `allowedSources`), and appends the transition event in the same transaction. Zero rows is an
 * {@link InvalidTransitionError} naming the state the step was really in; nothing is overwritten.
 *
 * A move to a settled status (CONFIRMED, FAILED), UNKNOWN or NOT_EXECUTED also notifies waiting API
 * requests; the NOTIFY is delivered only if the transaction commits.
 */
export async function transitionStep(trx: SagaTrx, t: TransitionInput): Promise<StepRow> {
  const r = await compareAndSet(trx, {
    table: 'saga_log',
    key: { run_id: t.runId, step_idx: t.stepIdx },
    transitions: STEP_TRANSITIONS,
    to: t.to,
    onlyFrom: t.onlyFrom,
    set: { ...t.patch, updated_at: sql<Date>`now()` },
    guards: t.leaseOwner === undefined ? [] : [['lease_owner', '=', t.leaseOwner]],
  });
  if (!r.moved) throw new InvalidTransitionError(t.runId, t.stepIdx, r.from, t.to);
  await appendStepEvent(trx, {
    runId: t.runId,
    stepIdx: t.stepIdx,
    kind: StepEventKind.TRANSITION,
    from: r.from,
    to: t.to,
    cause: t.cause,
    detail: t.detail ?? null,
    actor: t.actor ?? null,
  });
  if (NOTIFYING_STATUSES.has(t.to)) await notifyStepChanged(trx, t.schema, r.row.idempotency_key);
  return r.row;
}

/** Statuses whose arrival wakes API requests waiting on the step. */
export const NOTIFYING_STATUSES: ReadonlySet<StepStatus> = new Set<StepStatus>([
  ...SETTLED_STEP_STATUSES,
  StepStatus.UNKNOWN,
  StepStatus.NOT_EXECUTED,
  StepStatus.MANUAL_INTERVENTION,
  StepStatus.REJECTED,
]);

/** Wakes API requests waiting on this step (see `stepSettledChannel`). */
export async function notifyStepChanged(trx: SagaTrx, schema: string, key: string): Promise<void> {
  await sql`SELECT pg_notify(${stepSettledChannel(schema)}, ${key})`.execute(trx);
}
