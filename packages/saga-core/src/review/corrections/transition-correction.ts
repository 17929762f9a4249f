import { sql, type UpdateObject } from 'kysely';
import type { SagaTrx } from '../../db/connect.js';
import { compareAndSet, type CasGuard } from '../../db/compare-and-set.js';
import type { CorrectionRow, Database } from '../../db/schema.js';
import { InvalidCorrectionTransitionError } from '../../errors/errors.js';
import { CORRECTION_TRANSITIONS } from './correction-transitions.js';
import { StepEventKind } from '../../steps/step-event-kind.js';
import { type CorrectionStatus } from './correction-status.js';
import { appendStepEvent } from '../../steps/append-event.js';

/** Columns a move may set besides the status (values or SQL such as `now()`). */
export type CorrectionPatch = Omit<UpdateObject<Database, 'corrections'>, 'status'>;

export interface CorrectionTransitionInput {
  /** The correction's `id`. */
  readonly id: string;
  readonly to: CorrectionStatus;
  /** Why, for the event: `correction sent by alice`, `lookup: found`, `lease expired`, … */
  readonly cause: string;
  readonly detail?: Record<string, unknown>;
  readonly patch?: CorrectionPatch;
  /** Who moved it, when a person did; null for the harness's own moves (a settle by lookup). */
  readonly actor?: string | null;
  /** Narrows the legal sources further. */
  readonly onlyFrom?: readonly CorrectionStatus[];
  /** Guard: the row's send lease is held by this owner. */
  readonly leaseOwner?: string;
  /** Guard: the row's send lease has run out, by the database's clock. */
  readonly leaseExpired?: boolean;
  /** Guard: the row's current send key is this one (the move concerns this send, not a later one). */
  readonly key?: string;
  /** Guard: the message is still this version. */
  readonly version?: number;
}

/**
 * Moves one correction to `to` by compare-and-set (`compareAndSet`) on the legal sources of
 * `CORRECTION_TRANSITIONS` (and the guards given), and appends a DECISION event (`from`/`to` are correction
 * statuses) in the same transaction. Zero rows is an {@link InvalidCorrectionTransitionError} naming the
 * state the row was really in; nothing is overwritten. The caller holds the run's and the row's locks (`lockReviewItem`) or relies on the
 * row lock taken here; either way the read of the previous status and the update see the same row.
 */
export async function transitionCorrection(
  trx: SagaTrx,
  t: CorrectionTransitionInput,
): Promise<CorrectionRow> {
  const guards: CasGuard<'corrections'>[] = [];
  if (t.leaseOwner !== undefined) guards.push(['lease_owner', '=', t.leaseOwner]);
  if (t.leaseExpired) guards.push(['lease_until', '<', sql<Date>`now()`]);
  if (t.key !== undefined) guards.push(['idempotency_key', '=', t.key]);
  if (t.version !== undefined) guards.push(['version', '=', t.version]);
  const r = await compareAndSet(trx, {
    table: 'corrections',
    key: { id: t.id },
    transitions: CORRECTION_TRANSITIONS,
    to: t.to,
    onlyFrom: t.onlyFrom,
    set: t.patch,
    guards,
  });
  if (!r.moved) throw new InvalidCorrectionTransitionError(t.id, r.from, t.to);
  const row = r.row;
  await appendStepEvent(trx, {
    runId: row.run_id,
    stepIdx: row.step_idx,
    kind: StepEventKind.DECISION,
    from: r.from,
    to: t.to,
    cause: t.cause,
    detail: { correctionId: String(row.id), ...t.detail },
    actor: t.actor ?? null,
  });
  return row;
}

/** The lease columns cleared when a send ends (sent, refused, unknown). */
export const CLEAR_SEND_LEASE = { lease_owner: null, lease_until: null } as const satisfies CorrectionPatch;
