import { createHash } from 'node:crypto';

/**
 * The idempotency key of a step: sha256("<runId>:<stepIdx>:<tool>") as lowercase hex, first 32 characters.
 * Derived from the step's identity only, never from the model's arguments, so a reworded retry of the same
 * step carries the same key to the real system.
 */
export function stepKey(runId: string, stepIdx: number, tool: string): string {
  if (!Number.isInteger(stepIdx) || stepIdx < 0) throw new RangeError(`stepIdx must be a natural number`);
  return createHash('sha256').update(`${runId}:${stepIdx}:${tool}`).digest('hex').slice(0, 32);
}

/** The key under which the compensation of step `stepIdx` (forward tool `forwardTool`) is sent. */
export function compensationKey(runId: string, stepIdx: number, forwardTool: string): string {
  return stepKey(runId, stepIdx, `compensate:${forwardTool}`);
}
