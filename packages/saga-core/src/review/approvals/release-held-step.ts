import { sql } from 'kysely';
import type { SagaTrx } from '../../db/connect.js';
import type { StepRow } from '../../db/schema.js';
import { StepStatus } from '../../steps/step-status.js';
import { ToolClass } from '../../tools/tool-class.js';
import { enqueueExecution } from '../../outbox/enqueue-execution.js';
import { transitionStep } from '../../steps/transition-step.js';

export interface ReleaseInput {
  readonly runId: string;
  readonly stepIdx: number;
  readonly cause: string;
  readonly actor?: string | null;
  readonly schema: string;
}

/**
 * Sends a step a person approved: AWAITING_APPROVAL → INTENDED by compare-and-set, with its first outbox
 * message (its job id is its key), in the caller's transaction, so the approval and the dispatch commit
 * together. An irreversible step released before any pivot of its run is counted on the run
 * (`irreversible_before_pivot`): the pivot exists so that this count stays zero.
 */
export async function releaseHeldStep(trx: SagaTrx, r: ReleaseInput): Promise<StepRow> {
  const row = await transitionStep(trx, {
    runId: r.runId,
    stepIdx: r.stepIdx,
    to: StepStatus.INTENDED,
    onlyFrom: [StepStatus.AWAITING_APPROVAL],
    cause: r.cause,
    actor: r.actor ?? null,
    patch: { lease_until: null, lease_owner: null },
    schema: r.schema,
  });
  await enqueueExecution(trx, row, 1, r.schema);
  if (row.tool_class === ToolClass.IRREVERSIBLE)
    await sql`
      UPDATE runs SET irreversible_before_pivot = irreversible_before_pivot + 1
       WHERE run_id = ${r.runId} AND (pivot_idx IS NULL OR pivot_idx > ${r.stepIdx})`.execute(trx);
  return row;
}
