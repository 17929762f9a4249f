import { sql } from 'kysely';
import { APPROVAL_TRANSITIONS } from './approval-transitions.js';
import type { SagaTrx } from '../../db/connect.js';
import { compareAndSet } from '../../db/compare-and-set.js';
import type { ApprovalRow } from '../../db/schema.js';
import { InvalidApprovalTransitionError } from '../../errors/errors.js';
import { ApprovalKind, type ApprovalStatus } from './approval-status.js';
import { StepEventKind } from '../../steps/step-event-kind.js';
import { appendStepEvent } from '../../steps/append-event.js';

export interface ApprovalTransitionInput {
  /** The approval's `id`. */
  readonly id: string;
  readonly to: ApprovalStatus;
  /** Who decided; null for the harness's own moves (an expiry). */
  readonly actor: string | null;
  /** The deciding token's id, kept as `decided_by_token` beside `actor` (see `Decider`); null or absent: none. */
  readonly tokenId?: string | null | undefined;
  /** Kept on the approval and in its event: the operator's comment, or why the harness closed it. */
  readonly comment: string | null;
}

/**
 * Moves one approval to `to` by compare-and-set on the legal sources of `APPROVAL_TRANSITIONS` (only
 * `pending` has exits), setting who decided and when (`decided_at = now()`, the database's clock), and
 * appends the decision as a DECISION event in the same transaction: on the held step for a step approval,
 * on the run for a pivot. Zero rows is an {@link InvalidApprovalTransitionError} naming the status the
 * approval was really in; nothing is overwritten.
 */
export async function transitionApproval(trx: SagaTrx, t: ApprovalTransitionInput): Promise<ApprovalRow> {
  const r = await compareAndSet(trx, {
    table: 'approvals',
    key: { id: t.id },
    transitions: APPROVAL_TRANSITIONS,
    to: t.to,
    set: {
      decided_by: t.actor,
      decided_by_token: t.tokenId ?? null,
      decided_at: sql<Date>`now()`,
      comment: t.comment,
    },
  });
  if (!r.moved) throw new InvalidApprovalTransitionError(t.id, r.from, t.to);
  const row = r.row;
  await appendStepEvent(trx, {
    runId: row.run_id,
    // A held step's or compensation's decision is an event of that step; a pivot's or renewal's, of the run.
    stepIdx:
      row.kind === ApprovalKind.STEP || row.kind === ApprovalKind.COMPENSATION
        ? (row.steps[0] ?? null)
        : null,
    kind: StepEventKind.DECISION,
    from: r.from,
    to: t.to,
    cause: `${row.kind} approval ${row.id} ${t.to}${t.comment ? `: ${t.comment}` : ''}`,
    detail: { approvalId: row.id, hash: row.hash, steps: row.steps },
    actor: t.actor,
  });
  return row;
}
