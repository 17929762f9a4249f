import { z } from 'zod';

/**
 * The statuses a `POST /v1/runs/{runId}/calls` answer can carry, as the dispatcher sends them.
 *
 * `PURE` is a wire status only (pure tools write no step); the others are step statuses of
 * `@agent-saga/core`'s `StepStatus`, a correspondence the client's tests check. The client does not import
 * core at run time: an agent backend should not pull in Postgres drivers to call tools.
 */
export const CallStatus = {
  PURE: 'PURE',
  CONFIRMED: 'CONFIRMED',
  FAILED: 'FAILED',
  /** A person refused the call before it was sent; nothing happened. */
  REJECTED: 'REJECTED',
  UNKNOWN: 'UNKNOWN',
  INTENDED: 'INTENDED',
  AWAITING_APPROVAL: 'AWAITING_APPROVAL',
} as const;
export type CallStatus = (typeof CallStatus)[keyof typeof CallStatus];

const stepIdx = z.number().int().nonnegative();
const idempotencyKey = z.string().min(1);

const pureOutcome = z.object({ status: z.literal(CallStatus.PURE), result: z.unknown() });

const confirmedOutcome = z.object({
  status: z.literal(CallStatus.CONFIRMED),
  stepIdx,
  idempotencyKey,
  externalRef: z.string().nullable(),
  result: z.unknown(),
  /** True whenever the outcome came from the log rather than from this very call's execution. */
  replayed: z.boolean(),
});

const failedOutcome = z.object({
  status: z.literal(CallStatus.FAILED),
  stepIdx,
  idempotencyKey,
  /** What the real system said when it refused the call (the tool's `ClientError`); shape is the tool's. */
  error: z.unknown(),
  replayed: z.boolean().optional(),
});

const rejectedOutcome = z.object({
  status: z.literal(CallStatus.REJECTED),
  stepIdx,
  idempotencyKey,
  /** Written for a model: a person refused the call, do not reach the same goal another way. */
  message: z.string(),
});

const unknownOutcome = z.object({
  status: z.literal(CallStatus.UNKNOWN),
  stepIdx,
  idempotencyKey,
  /** Written for a model: do not retry with new arguments, the harness resolves the outcome. */
  message: z.string(),
});

const pendingOutcome = z.object({
  status: z.enum([CallStatus.INTENDED, CallStatus.AWAITING_APPROVAL]),
  stepIdx,
  idempotencyKey,
});

/** Any answer the dispatcher may give to a call, validated; UNKNOWN is turned into a thrown error later. */
export const callResponseSchema = z.discriminatedUnion('status', [
  pureOutcome,
  confirmedOutcome,
  failedOutcome,
  rejectedOutcome,
  unknownOutcome,
  pendingOutcome,
]);
export type CallResponse = z.infer<typeof callResponseSchema>;

/**
 * What `call` resolves to. A FAILED step is an outcome the agent should see (the real system said no and
 * nothing happened), not an exception; so is REJECTED (a person said no before anything was sent).
 * UNKNOWN is never resolved: it is thrown as `ToolOutcomeUnknown`.
 * INTENDED means the step had not settled within `waitMs`; AWAITING_APPROVAL means a human must decide first.
 */
export type CallOutcome = Exclude<CallResponse, { readonly status: typeof CallStatus.UNKNOWN }>;

/** The outcomes that settle a step for good: after one of these the step's index is done with. */
export const SETTLED_CALL_STATUSES = [CallStatus.CONFIRMED, CallStatus.FAILED, CallStatus.REJECTED] as const;
export type SettledOutcome = Extract<
  CallOutcome,
  { readonly status: (typeof SETTLED_CALL_STATUSES)[number] }
>;

/** True for CONFIRMED, FAILED and REJECTED: a retry of the step would only repeat this answer. */
export function isSettled(outcome: { readonly status: string }): boolean {
  return (SETTLED_CALL_STATUSES as readonly string[]).includes(outcome.status);
}

/**
 * The outcome a STEP_UNRESOLVED refusal may carry: the settled outcome of the step the caller had not seen
 * yet, with the tool that step called.
 */
export const unseenOutcomeSchema = z.intersection(
  callResponseSchema,
  z.object({ tool: z.string().optional() }),
);
export type UnseenOutcome = z.infer<typeof unseenOutcomeSchema>;
