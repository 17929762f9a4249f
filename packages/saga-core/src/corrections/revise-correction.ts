import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import type { CorrectionRow } from '../db/schema.js';
import { InvalidCorrectionTransitionError } from '../errors.js';
import { CorrectionStatus, StepEventKind } from '../statuses.js';
import { appendStepEvent } from '../saga-log/append-event.js';

export interface ReviseInput {
  readonly id: string;
  /** The new message. */
  readonly command: Record<string, unknown>;
  readonly actor: string;
  readonly detail?: Record<string, unknown>;
}

/**
 * An edit: a new version of the message, by compare-and-set on `open` (never while a send is under way or
 * unknown: that message may be out). The version goes up by one, so the next send has its own key
 * (`correctionSendKey`), and the key of the previous version's send is cleared from the row (it stays in
 * the events). Appends a DECISION event `open → open`. Zero rows: {@link InvalidCorrectionTransitionError}.
 */
export async function reviseCorrection(trx: SagaTrx, r: ReviseInput): Promise<CorrectionRow> {
  const row = await trx
    .updateTable('corrections')
    .set({
      command: JSON.stringify(r.command),
      version: sql<number>`version + 1`,
      idempotency_key: null,
      send_started_at: null,
    })
    .where('id', '=', r.id)
    .where('status', '=', CorrectionStatus.OPEN)
    .returningAll()
    .executeTakeFirst();
  if (!row) {
    const now = await trx
      .selectFrom('corrections')
      .select('status')
      .where('id', '=', r.id)
      .executeTakeFirst();
    throw new InvalidCorrectionTransitionError(r.id, now?.status ?? null, CorrectionStatus.OPEN);
  }
  await appendStepEvent(trx, {
    runId: row.run_id,
    stepIdx: row.step_idx,
    kind: StepEventKind.DECISION,
    from: CorrectionStatus.OPEN,
    to: CorrectionStatus.OPEN,
    cause: `correction edited by ${r.actor}`,
    detail: { correctionId: String(row.id), version: row.version, ...r.detail },
    actor: r.actor,
  });
  return row;
}
