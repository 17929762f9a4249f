import type { StepRow } from '../../db/schema.js';
import { ErrorCode } from '../../errors/error-code.js';
import { StepStatus } from '../../steps/step-status.js';
import type { StepOutcome } from '../../steps/outcome/step-outcome.js';

/**
 * A step a person approved (a pivot's commit step, a held step: `approval_id` set) runs only with the tool
 * version the approval's hash bound. That version is the row's `tool_version`: the pivot and the hold write
 * the same `tool.version` into the row and into the hash (`proposalHash`), in one transaction. When the
 * registered version differs, nothing is sent: the outcome is FAILED (honest: nothing happened) with
 * `ErrorCode.APPROVED_VERSION_CHANGED`; after a pivot, the run then stops in MANUAL_INTERVENTION with a case
 * carrying that error (`advanceCommit`), since it only rolls forward.
 *
 * A step nobody approved keeps today's rule (the stored arguments run if they parse): null here.
 */
export function approvedVersionRefusal(
  registeredVersion: number,
  row: Pick<StepRow, 'approval_id' | 'tool' | 'tool_version'>,
): StepOutcome | null {
  if (row.approval_id === null || registeredVersion === row.tool_version) return null;
  return {
    status: StepStatus.FAILED,
    error: {
      code: ErrorCode.APPROVED_VERSION_CHANGED,
      message:
        `approval ${row.approval_id} bound ${row.tool} version ${row.tool_version}; this executor has ` +
        `version ${registeredVersion}; nothing was sent`,
    },
  };
}
