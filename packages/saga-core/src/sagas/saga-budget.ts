import { z } from 'zod';

/**
 * Amounts of money by currency, in minor units (cents): `{ usd: 5000 }`. Why minor units: integers, as
 * Stripe counts them, so no sum is ever rounded. A currency is its three-letter code, in either case.
 */
export type MoneyAmounts = Readonly<Record<string, number>>;

export const moneyAmountsSchema = z
  .record(
    z.string().regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code'),
    z.number().int().min(0, 'must be a non-negative amount in minor units'),
  )
  .superRefine((amounts, ctx) => {
    // Currencies compare lower-cased: `{ USD: 1, usd: 2 }` would say two things about one limit.
    const seen = new Set<string>();
    for (const currency of Object.keys(amounts)) {
      const key = currency.toLowerCase();
      if (seen.has(key))
        ctx.addIssue({ code: 'custom', path: [currency], message: `names currency ${key} twice` });
      seen.add(key);
    }
  });

/**
 * A definition's default budget for its runs: how far a run may go before it is stopped. A bound run's
 * budget is these defaults with the run's own fields on top (`bindRun`; `deadlineMs` becomes the absolute
 * `deadline` creation + deadlineMs). Enforced by the intake transaction on every new step of a run that has
 * one (`bindCall`: `409 BUDGET_EXCEEDED`, `field` naming the limit); a run whose deadline passes while it
 * is RUNNING or AWAITING_APPROVAL is stopped by the reconciler's deadline sweep (`stopOverdueRuns`: it
 * unwinds under `unwindOnFailure`, else MANUAL_INTERVENTION with a case).
 */
export interface SagaBudget {
  /** Steps a run may take: every side-effecting call (a saga-log row) counted, pure reads not. */
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
 * A run's own budget as `POST /v1/runs { budget }` takes it: the definition's fields, with an absolute
 * `deadline` (ISO time with an offset) instead of `deadlineMs`. Stored as core's `RunBudget`.
 */
export const runBudgetSchema = z
  .object({
    maxSteps: z.number().int().min(1).optional().describe('Side-effecting steps the run may take'),
    maxAmount: moneyAmountsSchema
      .optional()
      .describe('Money the run may move, by currency in minor units ({ "usd": 50000 })'),
    deadline: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('ISO time after which the run takes no calls'),
    maxAttempts: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Sends the run may make in all: first sends, agent retries and re-dispatches'),
  })
  .strict();
export type RunBudgetInput = z.infer<typeof runBudgetSchema>;

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
