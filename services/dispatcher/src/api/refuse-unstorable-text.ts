import type { FastifyRequest } from 'fastify';
import { BadRequestError, findUnstorableText, InvalidArgsError } from '@agent-saga/core';

/**
 * A `/v1` hook before validation: a request whose path, query or body holds a string Postgres cannot store
 * (a NUL, an unpaired surrogate: see core's `unstorable-text.ts`) is refused 400 naming the field, before
 * any route reads it. Without it such a string reaches an insert (a run id, an unwind reason, a tool's
 * argument) and fails there as a 500. A call's arguments (`args.…`) are refused as INVALID_ARGS, the code
 * every other bad argument gets; any other field as BAD_REQUEST.
 */
export function refuseUnstorableText(req: FastifyRequest): Promise<void> {
  for (const value of [req.params, req.query, req.body]) {
    const found = findUnstorableText(value, '');
    if (!found) continue;
    const issue = { field: found.field, message: found.reason };
    const message = `${found.field}: ${found.reason}`;
    throw found.field === 'args' || found.field.startsWith('args.')
      ? new InvalidArgsError(found.field, message, [issue])
      : new BadRequestError(found.field, message, [issue]);
  }
  return Promise.resolve();
}
