import {
  ApprovalDecidedError,
  ApprovalExpiredError,
  ApprovalHashMismatchError,
  CaseActionError,
  ClientError,
  CorrectionSendingError,
  InvalidCorrectionTransitionError,
  ForbiddenError,
  PivotRequiredError,
  PivotStagedError,
  IdempotencyMismatchError,
  InvalidArgsError,
  NotFoundError,
  RunNotRunningError,
  SagaError,
  StepConflictError,
  StepUnresolvedError,
  ToolNotRegisteredError,
} from '@agent-saga/core';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { BadRequestError, RunIdTakenError, UnauthorizedError } from './api-errors.js';
import { PureToolError } from './run-pure-tool.js';
import { CorrectionNotSentError } from './send-correction.js';

/** The body of every error answer: `{ error: { code, message, field?, fields?, … } }`. */
export interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string } & Record<string, unknown>;
}

export interface HttpError {
  readonly status: number;
  readonly body: ErrorBody;
  /** Whether the server is at fault (logged as an error, message hidden from the caller). */
  readonly internal: boolean;
}

/**
 * Maps anything a handler throws onto an HTTP status and a body with a stable code. Stable codes are a
 * contract with `@agent-saga/client`; anything this function does not recognise is a 500 whose message is
 * not shown (it may name internals), logged by the caller.
 */
export function toHttpError(err: unknown): HttpError {
  const known = mapKnown(err);
  if (known) return { ...known, internal: false };
  return {
    status: 500,
    body: { error: { code: 'INTERNAL', message: 'internal error; the request may be retried' } },
    internal: true,
  };
}

function mapKnown(err: unknown): Omit<HttpError, 'internal'> | undefined {
  const body = (code: string, message: string, extra: Record<string, unknown> = {}): ErrorBody => ({
    error: { code, message, ...extra },
  });
  if (hasZodFastifySchemaValidationErrors(err)) {
    const bad = fromValidation(err.validation, (err as { validationContext?: string }).validationContext);
    return { status: 400, body: body(bad.code, bad.message, { field: bad.field, issues: bad.issues }) };
  }
  if (err instanceof BadRequestError)
    return { status: 400, body: body(err.code, err.message, { field: err.field, issues: err.issues }) };
  if (err instanceof InvalidArgsError)
    return { status: 400, body: body(err.code, err.message, { field: err.field, issues: err.issues }) };
  if (err instanceof ToolNotRegisteredError)
    return { status: 400, body: body(err.code, err.message, { field: 'tool', tool: err.tool }) };
  if (err instanceof UnauthorizedError) return { status: 401, body: body(err.code, err.message) };
  if (err instanceof NotFoundError) return { status: 404, body: body(err.code, err.message) };
  if (err instanceof ForbiddenError) return { status: 403, body: body(err.code, err.message) };
  if (err instanceof PivotRequiredError)
    return { status: 409, body: body(err.code, err.message, { tool: err.tool }) };
  if (err instanceof PivotStagedError)
    return { status: 409, body: body(err.code, err.message, { runId: err.runId }) };
  if (err instanceof ApprovalHashMismatchError)
    return { status: 409, body: body(err.code, err.message, { approvalId: err.approvalId }) };
  if (err instanceof ApprovalDecidedError)
    return { status: 409, body: body(err.code, err.message, { status: err.status }) };
  if (err instanceof ApprovalExpiredError)
    return {
      status: 410,
      body: body(err.code, err.message, {
        approvalId: err.approvalId,
        expiresAt: err.expiresAt.toISOString(),
      }),
    };
  if (err instanceof CorrectionSendingError)
    return {
      status: 409,
      body: body(err.code, err.message, {
        correctionId: err.correctionId,
        status: err.status,
        believableAt: err.believableAt?.toISOString() ?? null,
      }),
    };
  // A correction moved between our read and our write (a sweep settled it): read it again.
  if (err instanceof InvalidCorrectionTransitionError)
    return {
      status: 409,
      body: body(err.code, err.message, { correctionId: err.correctionId, status: err.from }),
    };
  if (err instanceof CaseActionError)
    return { status: 409, body: body(err.code, err.message, { caseId: err.caseId }) };
  if (err instanceof StepConflictError)
    return {
      status: 409,
      body: body(err.code, err.message, { stepIdx: err.stepIdx, existingTool: err.existingTool }),
    };
  if (err instanceof StepUnresolvedError)
    return {
      status: 409,
      body: body(err.code, err.message, {
        stepIdx: err.stepIdx,
        ...(err.outcome ? { outcome: err.outcome } : {}),
      }),
    };
  if (err instanceof IdempotencyMismatchError)
    return { status: 409, body: body(err.code, err.message, { stepIdx: err.stepIdx, fields: err.fields }) };
  if (err instanceof RunNotRunningError)
    return { status: 409, body: body(err.code, err.message, { runId: err.runId, runStatus: err.status }) };
  if (err instanceof RunIdTakenError) return { status: 409, body: body(err.code, err.message) };
  // Only a pure tool runs inside a request; a side-effecting tool's ClientError is a FAILED step instead.
  if (err instanceof ClientError)
    return { status: 422, body: body(err.code, err.message, { details: err.details }) };
  if (err instanceof PureToolError) return { status: 502, body: body(err.code, err.message) };
  if (err instanceof CorrectionNotSentError)
    return {
      status: err.code === 'CORRECTION_REFUSED' ? 422 : 502,
      body: body(err.code, err.message, { correctionId: String(err.correction.id) }),
    };
  if (err instanceof SagaError) return undefined;
  // Fastify's own client errors (malformed JSON, wrong content type, body too large) carry a 4xx status.
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const message = err instanceof Error ? err.message : 'bad request';
    if (status === 404) return { status, body: body('NOT_FOUND', message) };
    return { status, body: body('BAD_REQUEST', message) };
  }
  return undefined;
}

/** `/stepIdx` in the body → `stepIdx`; a path parameter keeps its name (`runId`). */
function fromValidation(
  validation: readonly { instancePath: string; message?: string }[],
  context: string | undefined,
): { code: string; message: string; field: string; issues: { field: string; message: string }[] } {
  const issues = validation.map((v) => ({
    field: v.instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.') || (context ?? 'body'),
    message: v.message ?? 'invalid',
  }));
  const first = issues[0] ?? { field: context ?? 'body', message: 'invalid' };
  return { code: 'BAD_REQUEST', message: `${first.field}: ${first.message}`, field: first.field, issues };
}
