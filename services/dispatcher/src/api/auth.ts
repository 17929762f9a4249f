import type { FastifyRequest } from 'fastify';
import {
  ForbiddenError,
  hashToken,
  TokenRole,
  verifyApiToken,
  type Principal,
  type SagaDb,
} from '@agent-saga/core';
import { UnauthorizedError } from './api-errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every `/v1` request; null elsewhere. */
    principal: Principal | null;
  }
}

/**
 * How long a verified token is trusted without asking the database again. Saves a round trip on every call
 * of the hot path; a revoked token stops working within this time.
 */
const TOKEN_CACHE_MS = 5_000;
const TOKEN_CACHE_MAX = 10_000;

export type Authenticate = (req: FastifyRequest) => Promise<void>;

/**
 * Bearer authentication: `Authorization: Bearer <token>` maps to one tenant and role (tokens are stored
 * hashed; the cache is keyed by the hash too, so no plain token is kept). A missing, unknown or revoked
 * token is 401 UNAUTHORIZED. The token is never logged.
 */
export function createAuthenticate(db: SagaDb): Authenticate {
  const cache = new Map<string, { principal: Principal; until: number }>();
  return async (req) => {
    const header = req.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match?.[1]) throw new UnauthorizedError('missing bearer token (Authorization: Bearer <token>)');
    const hash = hashToken(match[1]);
    const now = Date.now();
    const hit = cache.get(hash);
    if (hit && hit.until > now) {
      req.principal = hit.principal;
      return;
    }
    const principal = await verifyApiToken(db, match[1]);
    if (!principal) {
      cache.delete(hash);
      throw new UnauthorizedError('unknown or revoked token');
    }
    if (cache.size >= TOKEN_CACHE_MAX) cache.clear();
    cache.set(hash, { principal, until: now + TOKEN_CACHE_MS });
    req.principal = principal;
  };
}

/** The principal of an authenticated request. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new UnauthorizedError('not authenticated');
  return req.principal;
}

/**
 * The principal of a request that only an operator may make: deciding approvals, resolving cases, sending
 * or dismissing corrections. An agent token is refused with 403 FORBIDDEN, whatever the tenant.
 */
export function operatorOf(req: FastifyRequest): Principal {
  const p = principalOf(req);
  if (p.role !== TokenRole.OPERATOR)
    throw new ForbiddenError(`this needs an operator token; an ${p.role} token may not decide or resolve`);
  return p;
}
