import { z } from 'zod';
import type { RunPolicy } from '../db/schema.js';
import { moneyAmountsSchema, type MoneyAmounts } from './saga-budget.js';

/**
 * A definition's default policy for its runs: the run policy of today (`requirePivot`, `unwindOnFailure`)
 * and the approvals later slices add. Stored and listed with the definition; **not enforced yet**: a run is
 * not bound to a definition in this slice, so only the policy given at `POST /v1/runs` applies.
 */
export interface SagaPolicy extends RunPolicy {
  /** Hold a forward call or a compensation that moves more than this (by currency) for an approval. */
  readonly approveMoneyAbove?: MoneyAmounts;
  /** Hold a compensation that deletes (a ticket, a draft) for an approval. */
  readonly approveDeletions?: boolean;
  /** How long the run's authority lasts from its creation or its last approval; recovery after it pauses. */
  readonly authorityTtlMs?: number;
}

export const sagaPolicySchema = z
  .object({
    requirePivot: z.boolean().optional(),
    unwindOnFailure: z.boolean().optional(),
    approveMoneyAbove: moneyAmountsSchema.optional(),
    approveDeletions: z.boolean().optional(),
    authorityTtlMs: z.number().int().min(1).optional(),
  })
  .strict();
