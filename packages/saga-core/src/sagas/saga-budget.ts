import { z } from 'zod';

/**
 * Amounts of money by currency, in minor units (cents): `{ usd: 5000 }`. Why minor units: integers, as
 * Stripe counts them, so no sum is ever rounded. A currency is its three-letter code, in either case.
 */
export type MoneyAmounts = Readonly<Record<string, number>>;

export const moneyAmountsSchema = z.record(
  z.string().regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code'),
  z.number().int().min(0, 'must be a non-negative amount in minor units'),
);

/**
 * A definition's default budget for its runs: how far a run may go before it is stopped. Stored and listed
 * with the definition; **not enforced yet** (a later slice counts steps, money, time and attempts on bound
 * runs and refuses a call that would pass one: `409 BUDGET_EXCEEDED`).
 */
export interface SagaBudget {
  /** Steps a run may take, every tool call counted. */
  readonly maxSteps?: number;
  /** Money a run may move, by currency, counted from what each money-moving tool declares it moves. */
  readonly maxAmount?: MoneyAmounts;
  /** How long after its creation a run may go on; a run's own budget names an absolute deadline. */
  readonly deadlineMs?: number;
  /** Sends a run may make in all: first sends, agent retries and re-dispatches. */
  readonly maxAttempts?: number;
}

export const sagaBudgetSchema = z
  .object({
    maxSteps: z.number().int().min(1).optional(),
    maxAmount: moneyAmountsSchema.optional(),
    deadlineMs: z.number().int().min(1).optional(),
    maxAttempts: z.number().int().min(1).optional(),
  })
  .strict();

/**
 * A step's retry policy. Stored and listed; **not enforced yet**: today a step is sent again only by the
 * agent (same step, same key) or by a re-dispatch after a proven absence (`SAGA_MAX_REDISPATCHES`).
 */
export interface StepRetry {
  /** Sends of this step in all, the first included. */
  readonly maxAttempts?: number;
  /** The first pause between two sends; later pauses grow from it. */
  readonly backoffMs?: number;
}

export const stepRetrySchema = z
  .object({
    maxAttempts: z.number().int().min(1).optional(),
    backoffMs: z.number().int().min(0).optional(),
  })
  .strict();
