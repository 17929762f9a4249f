import { z } from 'zod';
import {
  MAX_TOOL_NAME,
  OPEN_RUN_STATUSES,
  OPEN_STEP_STATUSES,
  callDecisionSchema,
  ApprovalKind,
  ApprovalStatus,
  CaseAction,
  CompensationStatus,
  CorrectionStatus,
  Decision,
  ReviewStatus,
  policyFloorSchema,
  RUN_ID,
  runBudgetSchema,
  sagaBudgetSchema,
  RunStatus,
  sagaPolicySchema,
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

import { MAX_WAIT_MS } from '../config.js';

export { MAX_WAIT_MS };

export const runIdParams = z.object({
  runId: z.string().regex(RUN_ID, 'must match [A-Za-z0-9._:-]{1,128}'),
});

/** Why 200: a plan is one entry per step a person reads and approves; a definition has at most 100 steps. */
export const MAX_PLAN_ENTRIES = 200;

export const createRunBody = z
  .object({
    runId: z.string().regex(RUN_ID, 'must match [A-Za-z0-9._:-]{1,128}').optional(),
    definition: z
      .object({
        name: z.string().min(1).max(100),
        version: z.number().int().min(1).optional().describe('Default: the highest registered'),
      })
      .strict()
      .optional()
      .describe('The saga definition the run is bound to (GET /v1/definitions); without it, an unbound run'),
    goal: z.string().max(2_000).optional().describe('What the run is for, in words'),
    actor: z.string().max(200).optional().describe('Who asked for the run'),
    plan: z
      .array(
        z
          .object({
            step: z.string().min(1).max(64).describe('A step id of the definition'),
            args: z.record(z.string(), z.unknown()).describe("Arguments, checked against the step's tool"),
          })
          .strict(),
      )
      .max(MAX_PLAN_ENTRIES)
      .optional()
      .describe('The plan as a model proposes it, checked against the definition (400 PLAN_INVALID)'),
    budget: runBudgetSchema
      .optional()
      .describe("The run's budget, over the definition's defaults (409 BUDGET_EXCEEDED past it)"),
    metadata: z.record(z.string(), z.unknown()).optional(),
    policy: sagaPolicySchema
      .optional()
      .describe("The run's policy, fixed at creation, over the definition's defaults"),
  })
  .optional();
export type CreateRunBody = z.infer<typeof createRunBody>;

export const runCreated = z.object({ runId: z.string(), status: z.enum(valuesOf(RunStatus)) });

/** The model's decision behind a call (core's `callDecisionSchema`); an unknown field is refused, named. */
export const callDecision = callDecisionSchema;

/**
 * The body of `POST /v1/runs/{runId}/calls` for a cap of `maxSteps` steps per run (SAGA_MAX_STEPS_PER_RUN):
 * `stepIdx` and each `dependsOn` entry at most `maxSteps - 1`, so an index past the cap, or one an int4
 * column cannot hold, is 400 BAD_REQUEST naming the field, never a 500. Core's intake checks the same bound
 * (for callers without this schema) and refuses a new step at a full run's cursor (409 STEP_LIMIT).
 */
export function callBodySchema(maxSteps: number) {
  const stepIndex = z
    .number()
    .int()
    .min(0)
    .max(maxSteps - 1);
  return z.object({
    tool: z.string().min(1).max(MAX_TOOL_NAME).describe('Name of a registered tool'),
    args: z.record(z.string(), z.unknown()).describe("Arguments, checked against the tool's schema"),
    stepIdx: stepIndex
      .optional()
      .describe(
        `The step this call is (the client library sends it); without it, the run cursor. At most ` +
          `${maxSteps - 1}: a run holds ${maxSteps} steps (SAGA_MAX_STEPS_PER_RUN)`,
      ),
    waitMs: z
      .number()
      .int()
      .min(0)
      .max(MAX_WAIT_MS)
      .optional()
      .describe(
        'How long to wait for the step to settle before answering 202; a retry of an UNKNOWN step waits as ' +
          'long for its resolution (the reconciler asks the real system by key) before answering UNKNOWN',
      ),
    dependsOn: z
      .array(stepIndex)
      .max(1_000)
      .optional()
      .describe(
        'Earlier steps this one depends on (undone after it on unwind); default: every earlier step of the run',
      ),
    decision: callDecision
      .optional()
      .describe("The model's decision behind this call, kept on the step's intake or retry event"),
  });
}

/** The shape of a call body, whatever the cap (the cap changes bounds, not fields). */
export type CallBody = z.infer<ReturnType<typeof callBodySchema>>;

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
  stepId: z
    .string()
    .nullable()
    .describe('The definition step the call was matched to, on a run bound to a definition; else null'),
  decision: callDecision
    .nullable()
    .describe(
      "The model's decision behind the step's latest call (intake or retry); null when none was sent",
    ),
  traceId: z
    .string()
    .nullable()
    .describe(
      "The step's W3C trace id (32 hex): the trace of its intake, executor call, lookups and compensation; " +
        'null for a step written before tracing',
    ),
});
export type StepView = z.infer<typeof stepView>;

export const proposedStepView = z.object({
  stepIdx: z.number().int(),
  tool: z.string(),
  toolClass: z.enum(valuesOf(ToolClass)),
  idempotencyKey: z.string(),
  args: z.unknown().describe('Exact arguments that will execute; secret fields redacted'),
  audience: z.array(z.string()),
  status: z.enum(valuesOf(StepStatus)),
});

/** The deciding token's stable id (`tok_…`) beside its label; null before migration 0017 or without a token. */
const deciderTokenId = z
  .string()
  .nullable()
  .describe("The id of the token that decided (`tok_…`), beside `decidedBy`/`resolvedBy`, the token's label");

export const approvalView = z.object({
  id: z.string(),
  runId: z.string(),
  kind: z.enum(valuesOf(ApprovalKind)),
  status: z.enum(valuesOf(ApprovalStatus)),
  hash: z.string().describe('A decision must carry this hash: it binds the decision to what will execute'),
  expiresAt: z.string(),
  summary: z.string().nullable(),
  steps: z.array(proposedStepView),
  evidence: z.record(z.string(), z.unknown()),
  decidedBy: z.string().nullable(),
  decidedByTokenId: deciderTokenId,
  decidedAt: z.string().nullable(),
  comment: z.string().nullable(),
  createdAt: z.string(),
});
export type ApprovalView = z.infer<typeof approvalView>;

export const caseView = z.object({
  id: z.string(),
  runId: z.string(),
  stepIdx: z.number().int().nullable(),
  tool: z.string().nullable(),
  reason: z.string(),
  evidence: z.record(z.string(), z.unknown()),
  status: z.enum(valuesOf(ReviewStatus)),
  resolvedBy: z.string().nullable(),
  resolvedByTokenId: deciderTokenId,
  resolvedAt: z.string().nullable(),
  resolution: z.record(z.string(), z.unknown()).nullable(),
  createdAt: z.string(),
});
export type CaseView = z.infer<typeof caseView>;

export const correctionView = z.object({
  id: z.string(),
  runId: z.string(),
  stepIdx: z.number().int(),
  tool: z.string().nullable().describe('The forward tool whose effect the correction answers'),
  command: z.record(z.string(), z.unknown()),
  audience: z.array(z.string()),
  status: z.enum(valuesOf(CorrectionStatus)),
  hash: z.string().describe('A send must carry this hash: it binds the send to this exact message'),
  idempotencyKey: z.string().nullable(),
  externalRef: z.string().nullable(),
  decidedBy: z.string().nullable(),
  decidedByTokenId: deciderTokenId,
  decidedAt: z.string().nullable(),
  comment: z.string().nullable(),
  createdAt: z.string(),
});
export type CorrectionView = z.infer<typeof correctionView>;

export const runView = z.object({
  runId: z.string(),
  status: z.enum(valuesOf(RunStatus)),
  statusReason: z.string().nullable(),
  cursor: z.number().int(),
  metadata: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  updatedAt: z.string(),
  steps: z
    .array(stepView)
    .describe('The steps in index order: all of them, or one page (`stepsLimit`, `stepsAfter`)'),
  policy: sagaPolicySchema,
  definition: z
    .object({ name: z.string(), version: z.number().int() })
    .nullable()
    .describe('The saga definition the run is bound to; null for an unbound run'),
  goal: z.string().nullable(),
  actor: z.string().nullable(),
  plan: z
    .array(z.object({ step: z.string(), args: z.unknown() }))
    .nullable()
    .describe('The validated plan; secret arguments redacted'),
  planHash: z.string().nullable().describe("sha256 of the plan's canonical JSON"),
  budget: z.object({
    maxSteps: z.number().int().optional(),
    maxAmount: z.record(z.string(), z.number().int()).optional(),
    deadline: z.string().optional().describe('ISO time after which the run takes no calls'),
    maxAttempts: z.number().int().optional(),
  }),
  pivotIdx: z.number().int().nullable().describe('First commit step of the pending or approved pivot'),
  irreversibleBeforePivot: z.number().int().describe('Irreversible steps released before any pivot'),
  approvals: z.array(approvalView),
  corrections: z.array(correctionView),
  cases: z.array(caseView),
});
export type RunView = z.infer<typeof runView>;

/** The answer of `GET /v1/runs/{runId}`: the run view with one page of its steps. */
export const runViewPage = runView.extend({
  nextStepsCursor: z
    .number()
    .int()
    .nullable()
    .describe(
      'Null when `steps` ends with the last step of the run; else pass it as `stepsAfter` for the next page',
    ),
});

export const eventView = z.object({
  id: z.string(),
  stepIdx: z.number().int().nullable().describe('Null for an event of the run itself'),
  kind: z.enum(valuesOf(StepEventKind)),
  from: z.string().nullable(),
  to: z.string().nullable(),
  cause: z.string(),
  detail: z.unknown(),
  actor: z.string().nullable().describe("Who decided, for a person's decision"),
  at: z.string(),
});
export type EventView = z.infer<typeof eventView>;

export const runEvents = z.object({
  runId: z.string(),
  events: z.array(eventView).describe('One page of events, oldest first'),
  nextCursor: z
    .string()
    .nullable()
    .describe('Null on the last page; else pass it as `after` for the next page'),
});

/**
 * Why 1,000 steps per page, by default and at most: the default cap on steps per run, so the run view of
 * a run under the default cap is complete in one answer (the shape callers without page options always
 * had); a run under a higher cap pages. A page of steps carries their arguments and results, so the bound
 * also bounds the answer's memory.
 */
export const STEPS_PAGE_MAX = 1_000;

/** A read's `waitMs`: a long poll, bounded as a call's wait is. */
const readWaitMs = z.coerce.number().int().min(0).max(MAX_WAIT_MS).default(0);

/** One run status, or several (a query parameter repeated). */
const runStatuses = z.union([z.enum(valuesOf(RunStatus)), z.array(z.enum(valuesOf(RunStatus))).min(1)]);

/**
 * Query of `GET /v1/runs/{runId}`: keyset pagination of its steps on `step_idx`, and a wait for its status
 * to move.
 */
export const runViewQuery = z.object({
  stepsLimit: z.coerce
    .number()
    .int()
    .min(1)
    .max(STEPS_PAGE_MAX)
    .default(STEPS_PAGE_MAX)
    .describe(`Steps per page; default and at most ${STEPS_PAGE_MAX}`),
  stepsAfter: z.coerce
    .number()
    .int()
    .min(0)
    .max(2_147_483_647)
    .optional()
    .describe("Only steps with a higher index: the previous page's `nextStepsCursor`"),
  waitMs: readWaitMs.describe(
    'How long the answer may wait while the run is in one of `whileStatus` (default 0: answer at once). ' +
      'The answer comes as soon as the status moves out of them, or when the time is up, with the run as ' +
      'it then is: a long poll in place of reading again and again',
  ),
  whileStatus: runStatuses
    .optional()
    .describe(
      `The statuses \`waitMs\` waits through (repeat the parameter for several); default the open ones ` +
        `(${OPEN_RUN_STATUSES.join(', ')}): wait for the run to end`,
    ),
});

/** Path of `GET /v1/runs/{runId}/steps/{stepIdx}`. */
export const stepParams = runIdParams.extend({
  stepIdx: z.coerce.number().int().min(0).max(2_147_483_647),
});

/** Query of `GET /v1/runs/{runId}/steps/{stepIdx}`. */
export const stepViewQuery = z.object({
  waitMs: readWaitMs.describe(
    `How long the answer may wait while the step is open (${OPEN_STEP_STATUSES.join(', ')}) and its run ` +
      'has not stopped going forward (default 0: answer at once): a long poll for its outcome that, unlike ' +
      'a call at its index, never sends anything',
  ),
});

/** Why 500 events per page, at most 1,000: a step has a handful of events; a page is bounded in memory. */
export const EVENTS_PAGE_DEFAULT = 500;
export const EVENTS_PAGE_MAX = 1_000;

/** Query of `GET /v1/runs/{runId}/events`: keyset pagination on the event id (the order they were written). */
export const runEventsQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(EVENTS_PAGE_MAX)
    .default(EVENTS_PAGE_DEFAULT)
    .describe(`Events per page; default ${EVENTS_PAGE_DEFAULT}, at most ${EVENTS_PAGE_MAX}`),
  after: z
    .string()
    .regex(/^[0-9]{1,18}$/, "must be an event id (the previous page's nextCursor)")
    .optional()
    .describe("Only events after this id: the previous page's `nextCursor`"),
});

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

// --- the pivot, approvals and the operator's queues ---

export const pivotBody = z.object({
  commit: z
    .array(
      z.object({
        tool: z.string().min(1).describe('A registered side-effecting tool'),
        args: z
          .record(z.string(), z.unknown())
          .describe("Exact arguments, checked against the tool's schema"),
      }),
    )
    .min(1)
    .max(50)
    .describe('The commit steps to run, in order, once one person approves the whole proposal'),
  summary: z.string().min(1).max(2_000).describe('What the proposal does, in words an approver reads'),
});
export type PivotBody = z.infer<typeof pivotBody>;

export const pivotAnswer = z.object({
  runId: z.string(),
  status: z.enum(valuesOf(RunStatus)),
  approvalId: z.string(),
  hash: z.string(),
  expiresAt: z.string(),
});

export const approvalIdParams = z.object({ id: z.string().min(1).max(200) });

export const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const approvalsQuery = listQuery.extend({
  status: z.enum(valuesOf(ApprovalStatus)).optional(),
  kind: z
    .enum(valuesOf(ApprovalKind))
    .optional()
    .describe('pivot, step (a held forward call), compensation (a held compensation) or renewal'),
  runId: z.string().regex(RUN_ID).optional(),
});

export const decisionBody = z.object({
  decision: z.enum(valuesOf(Decision)),
  hash: z.string().min(1).describe('The hash of the proposal as the approver saw it'),
  comment: z.string().max(2_000).optional(),
});

export const caseIdParams = z.object({ id: z.string().regex(/^[0-9]{1,18}$/, 'must be a case id') });

export const casesQuery = listQuery.extend({
  status: z.enum(valuesOf(ReviewStatus)).optional(),
  runId: z.string().regex(RUN_ID).optional(),
});

export const caseResolveBody = z.object({
  action: z.enum(valuesOf(CaseAction)),
  externalRef: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe('For `confirmed`: the external ref of the effect, found by hand'),
  comment: z.string().max(2_000).optional(),
});

export const correctionIdParams = caseIdParams;

export const correctionsQuery = listQuery.extend({
  status: z.enum(valuesOf(CorrectionStatus)).optional(),
  runId: z.string().regex(RUN_ID).optional(),
});

export const correctionSendBody = z.object({
  hash: z.string().min(1).describe('The hash of the message as the operator saw it'),
  comment: z.string().max(2_000).optional(),
});

export const correctionEditBody = z.object({
  hash: z.string().min(1).describe('The hash of the message being edited'),
  vars: z.record(z.string(), z.unknown()).describe('New template variables; the edit is a new proposal'),
});

export const correctionDismissBody = z.object({ comment: z.string().max(2_000).optional() });

export const runsQuery = listQuery.extend({
  status: z.enum(valuesOf(RunStatus)).optional(),
});

export const runSummary = z.object({
  runId: z.string(),
  status: z.enum(valuesOf(RunStatus)),
  statusReason: z.string().nullable(),
  steps: z.number().int(),
  pendingApprovals: z.number().int(),
  openCases: z.number().int(),
  openCorrections: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const runList = z.object({ runs: z.array(runSummary) });

// --- saga definitions ---

export const definitionStepView = z.object({
  id: z.string().describe('How a plan and a call name the step'),
  tool: z.string(),
  toolClass: z.enum(valuesOf(ToolClass)),
  dependsOn: z
    .array(z.string())
    .describe('Ids of the steps this one stands after: as declared, or every earlier step by default'),
  pivot: z
    .boolean()
    .describe('The go/no-go step, the first a pivot approval commits; every irreversible step is after it'),
  repeatable: z.boolean().describe('The business action may rightly be taken twice in one run'),
});

export const definitionView = z.object({
  name: z.string(),
  version: z.number().int(),
  steps: z.array(definitionStepView),
});
export type DefinitionView = z.infer<typeof definitionView>;

export const definitionList = z.object({ definitions: z.array(definitionView) });

export const toolView = z.object({
  name: z.string(),
  description: z.string().nullable().describe('What the tool does, for the model that calls it'),
  class: z.enum(valuesOf(ToolClass)),
  version: z.number().int(),
  inputSchema: z
    .record(z.string(), z.unknown())
    .describe("The arguments as JSON Schema (draft 2020-12), from the tool's zod schema"),
  identity: z
    .array(z.string())
    .describe('Argument paths that make two calls the same operation (none: the whole arguments)'),
  repeatable: z.boolean().describe('The same operation may be taken twice in a run'),
  audience: z
    .array(z.string())
    .nullable()
    .describe('Who could see the effect; null when it depends on the arguments'),
  needsApproval: z
    .boolean()
    .describe("Every call is held for a person's approval outside a pivot (an irreversible tool)"),
  movesMoney: z.boolean().describe("Counted against a run's budget.maxAmount"),
  deletes: z.boolean(),
  compensated: z.boolean().describe('Its effect can be undone by a stored compensation'),
});
export type ToolView = z.infer<typeof toolView>;

export const toolList = z.object({ tools: z.array(toolView) });

// --- the tenant's policy floor (operator only) ---

/**
 * The body of `PUT /v1/policy`: core's floor schema (each part optional, unknown fields refused, named) and
 * the version read, for a compare-and-set.
 */
export const policyFloorBody = policyFloorSchema
  .extend({
    ifVersion: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'The version read (GET /v1/policy): the change applies only if the floor is still at it (0: only ' +
          'if none is set yet), else 409 POLICY_VERSION_MISMATCH. Absent: last writer wins',
      ),
  })
  .strict();

export const policyFloorView = z.object({
  policy: sagaPolicySchema.describe("The floor of every new run's policy; `{}`: none"),
  budget: sagaBudgetSchema.describe("Ceilings of every new run's budget; `{}`: none"),
  version: z.number().int().describe('0: never set; then 1, +1 on every change'),
  updatedAt: z.string().nullable(),
  updatedBy: z.string().nullable().describe('The label of the operator token that set it last'),
  updatedByTokenId: z.string().nullable().describe('The id of that token (`tok_…`)'),
});
export type PolicyFloorView = z.infer<typeof policyFloorView>;
