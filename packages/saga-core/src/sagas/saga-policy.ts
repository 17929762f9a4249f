import { z } from 'zod';
import type { RunPolicy } from '../db/schema.js';
import { moneyAmountsSchema } from './saga-budget.js';

/**
 * A definition's default policy for its runs, and a run's own (`POST /v1/runs { policy }`): one shape, one
 * schema (`sagaPolicySchema`, which the API's body reuses). A bound run's policy is the definition's with
 * the run's own fields on top (`bindRun`).
 *
 * What each field does:
 * - `requirePivot`, `unwindOnFailure`: as before (refuse irreversible calls outside a pivot; unwind on a
 *   definitive failure before the pivot);
 * - `approveMoneyAbove`: a forward call whose tool's `moves` exceeds the currency's limit is held for an
 *   approval of kind `step` (the intake's `bindCall`); a compensation whose tool's `moves` (`ctx.of`: the
 *   forward step) exceeds it is held by the compensator for an approval of kind `compensation`
 *   (`checkApproval`), while the rest of the unwind goes on;
 * - `approveDeletions`: a compensation whose tool `deletes` is held the same way;
 * - `authorityTtlMs`: the run's authority runs from `runs.authority_at` (creation, then each approval
 *   approved); recovery after it lapses (a compensation, a harness re-dispatch) waits for an approval of
 *   kind `renewal` (`requestRenewal`) showing the recovery plan and its hash.
 */
export type SagaPolicy = RunPolicy;

export const sagaPolicySchema = z
  .object({
    requirePivot: z
      .boolean()
      .optional()
      .describe('Refuse irreversible calls outside a pivot (409 PIVOT_REQUIRED) instead of holding each'),
    unwindOnFailure: z
      .boolean()
      .optional()
      .describe('Unwind the run by itself when a step before the pivot fails definitively'),
    approveMoneyAbove: moneyAmountsSchema
      .optional()
      .describe('Hold a call that moves more than this (by currency, minor units) for an approval'),
    approveDeletions: z.boolean().optional().describe('Hold a compensation that deletes for an approval'),
    authorityTtlMs: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("How long the run's authority lasts from its creation or its last approval"),
  })
  .strict();
