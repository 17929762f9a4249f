import { z } from 'zod';
import {
  CompensationStatus,
  ReviewStatus,
  RUN_ID,
  RunStatus,
  StepEventKind,
  StepStatus,
  ToolClass,
  valuesOf,
} from '@agent-saga/core';

/**
 * The HTTP contract: every body, parameter and answer of the API, as zod schemas. Fastify validates requests
 * with them, serialises answers with them, and the OpenAPI document at /docs is generated from them. JSON
 * fields are camelCase; statuses come from the core status objects, never spelt out here.
 */

/** The longest a call may wait for its step to settle (a model's tool call should not hang longer). */
export const MAX_WAIT_MS = 60_000;

export const runIdParams = z.object({
  runId: z.string().regex(RUN_ID, 'must match [A-Za-z0-9._:-]{1,128}'),
});

export const createRunBody = z
  .object({
    runId: z.string().regex(RUN_ID, 'must match [A-Za-z0-9._:-]{1,128}').optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .optional();

export const runCreated = z.object({ runId: z.string(), status: z.enum(valuesOf(RunStatus)) });

export const callBody = z.object({
  tool: z.string().min(1).describe('Name of a registered tool'),
  args: z.record(z.string(), z.unknown()).describe("Arguments, checked against the tool's schema"),
  stepIdx: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('The step this call is (the client library sends it); without it, the run cursor'),
  waitMs: z
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_MS)
    .optional()
    .describe('How long to wait for the step to settle before answering 202'),
  dependsOn: z
    .array(z.number().int().min(0))
    .max(1_000)
    .optional()
    .describe(
      'Earlier steps this one depends on (undone after it on unwind); default: every earlier step of the run',
    ),
});
export type CallBody = z.infer<typeof callBody>;

const stepId = { stepIdx: z.number().int(), idempotencyKey: z.string() };

export const callAnswerBody = z.union([
  z.object({ status: z.literal('PURE'), result: z.unknown() }),
  z.object({
    status: z.literal(StepStatus.CONFIRMED),
    ...stepId,
    externalRef: z.string().nullable(),
    result: z.unknown(),
    replayed: z.boolean(),
  }),
  z.object({
    status: z.literal(StepStatus.FAILED),
    ...stepId,
    error: z.record(z.string(), z.unknown()),
    replayed: z.boolean(),
  }),
  z.object({
    status: z.enum([StepStatus.UNKNOWN, StepStatus.REJECTED]),
    ...stepId,
    message: z.string(),
  }),
  z.object({ status: z.enum([StepStatus.INTENDED, StepStatus.AWAITING_APPROVAL]), ...stepId }),
]);
export type CallAnswerBody = z.infer<typeof callAnswerBody>;

export const stepView = z.object({
  stepIdx: z.number().int(),
  tool: z.string(),
  toolClass: z.enum(valuesOf(ToolClass)),
  toolVersion: z.number().int(),
  status: z.enum(valuesOf(StepStatus)),
  idempotencyKey: z.string(),
  args: z.unknown().describe('Stored arguments; fields the tool declares secret are redacted'),
  externalRef: z.string().nullable(),
  result: z.unknown(),
  error: z.unknown(),
  compensation: z.unknown(),
  compensationStatus: z.enum(valuesOf(CompensationStatus)).nullable(),
  audience: z.array(z.string()),
  attempts: z.number().int(),
  outcomeDelivered: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type StepView = z.infer<typeof stepView>;

export const runView = z.object({
  runId: z.string(),
  status: z.enum(valuesOf(RunStatus)),
  statusReason: z.string().nullable(),
  cursor: z.number().int(),
  metadata: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  updatedAt: z.string(),
  steps: z.array(stepView),
  corrections: z.array(
    z.object({
      stepIdx: z.number().int(),
      command: z.record(z.string(), z.unknown()),
      audience: z.array(z.string()),
      status: z.enum(valuesOf(ReviewStatus)),
      createdAt: z.string(),
    }),
  ),
  cases: z.array(
    z.object({
      id: z.string(),
      stepIdx: z.number().int().nullable(),
      reason: z.string(),
      evidence: z.record(z.string(), z.unknown()),
      status: z.enum(valuesOf(ReviewStatus)),
      createdAt: z.string(),
    }),
  ),
});
export type RunView = z.infer<typeof runView>;

export const eventView = z.object({
  id: z.string(),
  stepIdx: z.number().int(),
  kind: z.enum(valuesOf(StepEventKind)),
  from: z.string().nullable(),
  to: z.string().nullable(),
  cause: z.string(),
  detail: z.unknown(),
  at: z.string(),
});
export type EventView = z.infer<typeof eventView>;

export const runEvents = z.object({ runId: z.string(), events: z.array(eventView) });

export const errorBody = z.object({
  error: z
    .object({
      code: z.string(),
      message: z.string(),
      field: z.string().optional(),
      fields: z.array(z.string()).optional(),
    })
    .catchall(z.unknown()),
});
