import { z } from 'zod';

/**
 * Schemas of the run endpoints' answers. Run and step statuses are kept as strings: a later dispatcher may
 * add states (compensation, approvals) and an older client must still read the log it is resuming from.
 * Unknown fields are kept (`looseObject`) so that newer columns reach the caller.
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
});
export type StepView = z.infer<typeof stepViewSchema>;

/** `GET /v1/runs/{runId}`: the run and all its steps, from the log. Resume reads this, not a transcript. */
export const runViewSchema = z.looseObject({
  runId: z.string(),
  status: z.string(),
  statusReason: z.string().nullable(),
  cursor: z.number().int().nonnegative(),
  steps: z.array(stepViewSchema),
});
export type RunView = z.infer<typeof runViewSchema>;

/** One row of `step_events`: a transition (`from` → `to`), an attempt, a retry call or a lookup. */
export const stepEventSchema = z.looseObject({
  id: z.string(),
  stepIdx: z.number().int().nonnegative(),
  kind: z.string(),
  from: z.string().nullable(),
  to: z.string().nullable(),
  cause: z.string(),
  /** What the event saw: the attempt number, the model's reworded arguments, a lookup's answer. */
  detail: z.unknown(),
  at: z.string(),
});
export type StepEvent = z.infer<typeof stepEventSchema>;

/** `GET /v1/runs/{runId}/events`. */
export const runEventsSchema = z.looseObject({ runId: z.string(), events: z.array(stepEventSchema) });
