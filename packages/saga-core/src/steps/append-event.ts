import type { SagaTrx, SagaDb } from '../db/connect.js';
import type { StepEventKind } from './step-event-kind.js';

export interface StepEventInput {
  readonly runId: string;
  /** Null for an event of the run itself. */
  readonly stepIdx: number | null;
  readonly kind: StepEventKind;
  readonly from?: string | null;
  readonly to?: string | null;
  readonly cause: string;
  readonly detail?: Record<string, unknown> | null;
  /** Who decided (a person's decision); omitted for the harness's own events. */
  readonly actor?: string | null;
}

/** Appends to `step_events`, the append-only history of every transition, attempt, retry and lookup. */
export async function appendStepEvent(db: SagaTrx | SagaDb, e: StepEventInput): Promise<void> {
  await db.insertInto('step_event_rows').values(eventRow(e)).execute();
}

/** Appends several events in one statement (one round trip; one commit outside a transaction), in order. */
export async function appendStepEvents(
  db: SagaTrx | SagaDb,
  events: readonly StepEventInput[],
): Promise<void> {
  if (events.length) await db.insertInto('step_event_rows').values(events.map(eventRow)).execute();
}

function eventRow(e: StepEventInput) {
  return {
    run_id: e.runId,
    step_idx: e.stepIdx,
    kind: e.kind,
    from_status: e.from ?? null,
    to_status: e.to ?? null,
    cause: e.cause,
    detail: e.detail == null ? null : JSON.stringify(e.detail),
    actor: e.actor ?? null,
  };
}
