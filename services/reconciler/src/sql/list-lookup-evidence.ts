import { StepEventKind, type SagaTrx } from '@agent-saga/core';

/** One lookup of a step as recorded: when, by whom (the event's cause), and what it saw. */
export interface LookupRecord {
  readonly at: Date;
  readonly cause: string;
  readonly detail: Record<string, unknown> | null;
}

/**
 * Every LOOKUP event of one step, oldest first: the reconciler's and the API's inline lookups alike. The
 * evidence a MANUAL_INTERVENTION carries, so a person sees what was asked and answered, and when.
 *
 * Parameters: `runId`, `stepIdx` name the step. Reads through the primary key `(run_id, id)` of `step_events`.
 */
export async function listLookupEvidence(
  trx: SagaTrx,
  step: { readonly runId: string; readonly stepIdx: number },
): Promise<LookupRecord[]> {
  return trx
    .selectFrom('step_events')
    .select(['at', 'cause', 'detail'])
    .where('run_id', '=', step.runId)
    .where('step_idx', '=', step.stepIdx)
    .where('kind', '=', StepEventKind.LOOKUP)
    .orderBy('id')
    .execute();
}
