import { ErrorCode, SagaError } from '@agent-saga/core';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';

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
 * contract with `@agent-saga/client`. A {@link SagaError} answers with its own `httpStatus`, `code`,
 * `message` and `httpFields()` (each error class carries them, so there is no table here to drift from
 * it); one whose `httpStatus` is 500 (the harness's own failure), and anything this function does not
 * recognise, is a 500 `INTERNAL` whose message is not shown (it may name internals), logged by the caller.
 */
export function toHttpError(err: unknown): HttpError {
  const known = mapKnown(err);
  if (known) return { ...known, internal: false };
  return {
    status: 500,
    body: { error: { code: ErrorCode.INTERNAL, message: 'internal error; the request may be retried' } },
    internal: true,
  };
}

function mapKnown(err: unknown): Omit<HttpError, 'internal'> | undefined {
  const body = (code: string, message: string, extra: Readonly<Record<string, unknown>> = {}): ErrorBody => ({
    error: { code, message, ...extra },
  });
  if (hasZodFastifySchemaValidationErrors(err)) {
    const bad = fromValidation(err.validation, (err as { validationContext?: string }).validationContext);
    return { status: 400, body: body(bad.code, bad.message, { field: bad.field, issues: bad.issues }) };
  }
  if (err instanceof SagaError) {
    if (err.httpStatus === 500) return undefined;
    return { status: err.httpStatus, body: body(err.code, err.message, err.httpFields()) };
  }
  // Fastify's own client errors (malformed JSON, wrong content type, body too large) carry a 4xx status.
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const message = err instanceof Error ? err.message : 'bad request';
    if (status === 404) return { status, body: body(ErrorCode.NOT_FOUND, message) };
    return { status, body: body(ErrorCode.BAD_REQUEST, message) };
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
  return {
    code: ErrorCode.BAD_REQUEST,
    message: `${first.field}: ${first.message}`,
    field: first.field,
    issues,
  };
}
