import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, SagaError } from '@agent-saga/core';
import { createTokenBuckets } from './token-buckets.js';

/**
 * 429 RATE_LIMITED: the token spent its requests (SAGA_RATE_LIMIT_PER_MINUTE). Nothing was done; the
 * answer carries `retryAfterMs`, and the `Retry-After` header the same in whole seconds (rounded up).
 */
export class RateLimitedError extends SagaError {
  readonly code = ErrorCode.RATE_LIMITED;
  override readonly httpStatus = 429;
  constructor(
    readonly perMinute: number,
    readonly retryAfterMs: number,
  ) {
    super(
      `this token sent more than ${perMinute} requests a minute (SAGA_RATE_LIMIT_PER_MINUTE); nothing was ` +
        `done: try again in ${retryAfterMs} ms`,
    );
  }

  override httpFields() {
    return { retryAfterMs: this.retryAfterMs, limit: this.perMinute };
  }
}

export type RateLimit = (req: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * The per-token rate limit of `/v1`, an `onRequest` hook registered after the auth hook: an unauthenticated
 * request was answered 401 already and spends nothing. The bucket is keyed by the token's id, which the
 * auth hook put on the principal (a rotated token keeps its bucket; no secret is kept). `perMinute` 0: no
 * limit, and no hook.
 */
export function createRateLimit(perMinute: number): RateLimit | null {
  if (perMinute === 0) return null;
  const buckets = createTokenBuckets(perMinute);
  return (req, reply) => {
    const tokenId = req.principal?.tokenId;
    if (tokenId === undefined) return Promise.resolve(); // the auth hook refused it; not reached
    const waitMs = buckets.take(tokenId);
    if (waitMs === 0) return Promise.resolve();
    void reply.header('retry-after', String(Math.ceil(waitMs / 1000)));
    return Promise.reject(new RateLimitedError(perMinute, waitMs));
  };
}
