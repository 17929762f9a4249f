import { z } from 'zod';
import { approvalViewSchema, caseViewSchema, correctionViewSchema } from './review-views.js';

/**
 * Schemas of the run endpoints' answers. Run and step statuses are kept as strings: a later dispatcher may
 * add states (compensation, approvals) and an older client must still read the log it is resuming from.
 * Unknown fields are kept (`looseObject`) so that newer columns reach the caller. Fields a dispatcher
 * added later (the policy, the pivot, the review items) have defaults, so an older dispatcher still reads.
 */

/** `POST /v1/runs` → `201 { runId, status }` (or 200 for an existing run of the same tenant). */
export const createRunResponseSchema = z.object({ runId: z.string().min(1), status: z.string() });

/** One step of the saga log, as `GET /v1/runs/{runId}` lists it. */
export const stepViewSchema = z.looseObject({
  stepIdx: z.number().int().nonnegative(),
  tool: z.string(),
  toolClass: z.string(),
  status: z.string(),
  idempotencyKey: z.string(),
  args: z.unknown(),
  externalRef: z.string().nullable(),
  result: z.unknown(),
  error: z.unknown(),
  compensation: z.unknown(),
  compensationStatus: z.string().nullable(),
  audience: z.array(z.string()),
  attempts: z.number().int().nonnegative(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** The definition step the call was matched to, on a bound run; null otherwise (absent: older servers). */
  stepId: z.string().nullable().optional(),
  /** The model's decision behind the step's latest call; null when none was sent (absent: older servers). */
  decision: z
    .object({
      model: z.string().optional(),
      promptVersion: z.string().optional(),
      turnId: z.string().optional(),
      reasoningRef: z.string().optional(),
    })
    .nullable()
    .optional(),
  /** The step's W3C trace id (32 hex); null for a step stored before tracing (absent: older servers). */
  traceId: z.string().nullable().optional(),
});
export type StepView = z.infer<typeof stepViewSchema>;

/** The run's policy, fixed at creation (`createRun({ policy })`), over its definition's defaults. */
export const runPolicySchema = z.looseObject({
  /** Refuse irreversible calls outside a pivot (409 PIVOT_REQUIRED) instead of holding each one. */
  requirePivot: z.boolean().optional(),
  /** Unwind the run by itself when a step before the pivot fails definitively. */
  unwindOnFailure: z.boolean().optional(),
  /** Hold a call that moves more than this (by currency, in minor units: `{ usd: 50000 }`) for approval. */
  approveMoneyAbove: z.record(z.string(), z.number()).optional(),
  /** Hold a compensation that deletes (a ticket, a draft) for approval. */
  approveDeletions: z.boolean().optional(),
  /** How long the run's authority lasts from its creation or its last approval. */
  authorityTtlMs: z.number().optional(),
});
export type RunPolicy = z.infer<typeof runPolicySchema>;

/** A run's budget (`createRun({ budget })`); amounts by currency in minor units, `deadline` an ISO time. */
export const runBudgetSchema = z.looseObject({
  maxSteps: z.number().int().optional(),
  maxAmount: z.record(z.string(), z.number()).optional(),
  deadline: z.string().optional(),
  maxAttempts: z.number().int().optional(),
});
export type RunBudget = z.infer<typeof runBudgetSchema>;

/** One entry of a plan: a step id of the run's definition and its arguments. */
export const planEntrySchema = z.looseObject({
  step: z.string(),
  args: z.record(z.string(), z.unknown()),
});
export type PlanEntry = z.infer<typeof planEntrySchema>;

/**
 * `GET /v1/runs/{runId}`: the run and all its steps, from the log, with its approvals, corrections and
 * cases. Resume reads this, not a transcript.
 */
export const runViewSchema = z.looseObject({
  runId: z.string(),
  status: z.string(),
  statusReason: z.string().nullable(),
  cursor: z.number().int().nonnegative(),
  steps: z.array(stepViewSchema),
  metadata: z.record(z.string(), z.unknown()).optional(),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
  policy: runPolicySchema.default({}),
  /** The saga definition the run is bound to; null for an unbound run (or an older dispatcher). */
  definition: z.object({ name: z.string(), version: z.number().int() }).nullable().default(null),
  goal: z.string().nullable().default(null),
  actor: z.string().nullable().default(null),
  /** The validated plan (secret arguments redacted) and the sha256 of its canonical JSON. */
  plan: z
    .array(z.looseObject({ step: z.string(), args: z.unknown() }))
    .nullable()
    .default(null),
  planHash: z.string().nullable().default(null),
  budget: runBudgetSchema.default({}),
  /** First commit step of the pending or approved pivot; null without one. */
  pivotIdx: z.number().int().nullable().default(null),
  /** Irreversible steps released (each by its own approval) before any pivot. */
  irreversibleBeforePivot: z.number().int().nonnegative().default(0),
  approvals: z.array(approvalViewSchema).default([]),
  corrections: z.array(correctionViewSchema).default([]),
  cases: z.array(caseViewSchema).default([]),
});
export type RunView = z.infer<typeof runViewSchema>;

/**
 * One page of `GET /v1/runs/{runId}`: the run view with at most `stepsLimit` steps; `nextStepsCursor` is
 * the `stepsAfter` of the next page, null on the last (absent from a dispatcher that does not page).
 */
export const runViewPageSchema = runViewSchema.extend({
  nextStepsCursor: z.number().int().nullable().default(null),
});

/** One row of `GET /v1/runs`: a run with counts of what waits for a person. */
export const runSummarySchema = z.looseObject({
  runId: z.string(),
  status: z.string(),
  statusReason: z.string().nullable(),
  steps: z.number().int().nonnegative(),
  pendingApprovals: z.number().int().nonnegative(),
  openCases: z.number().int().nonnegative(),
  openCorrections: z.number().int().nonnegative(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type RunSummary = z.infer<typeof runSummarySchema>;

/** `GET /v1/runs`, newest first. */
export const runListSchema = z.looseObject({ runs: z.array(runSummarySchema) });

/**
 * One row of `step_events`: a transition (`from` → `to`), an attempt, a retry call or a lookup of a step;
 * or, with `stepIdx` null, an event of the run itself (its status changes, a decision about the whole run).
 */
export const stepEventSchema = z.looseObject({
  id: z.string(),
  stepIdx: z.number().int().nonnegative().nullable(),
  kind: z.string(),
  from: z.string().nullable(),
  to: z.string().nullable(),
  cause: z.string(),
  /** What the event saw: the attempt number, the model's reworded arguments, a lookup's answer. */
  detail: z.unknown(),
  /** Who decided, for a person's decision (an approval, a case resolved by hand); null otherwise. */
  actor: z.string().nullable().optional(),
  at: z.string(),
});
export type StepEvent = z.infer<typeof stepEventSchema>;

/** `GET /v1/runs/{runId}/events`. */
/**
 * One page of `GET /v1/runs/{runId}/events`; `nextCursor` is the `after` of the next page, null on the last
 * (absent from a dispatcher that does not page).
 */
export const runEventsSchema = z.looseObject({
  runId: z.string(),
  events: z.array(stepEventSchema),
  nextCursor: z.string().nullable().default(null),
});
