import type { FastifyRequest } from 'fastify';
import {
  bearerTokenOf,
  ForbiddenError,
  hashToken,
  recordTokenUse,
  TOKEN_USE_RESOLUTION_S,
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
 * How long a verified token is trusted without asking the database again; a revoked, rotated or expired
 * token stops working on every API process within this time. Why 500 ms, not a NOTIFY on revoke: the
 * promise is "401 within a second everywhere", and a NOTIFY needs a LISTEN session per process whose loss
 * drops notices, so it would need a short TTL behind it anyway; the TTL alone is one rule with no gap. Its
 * cost is one primary-key lookup per token per process every 500 ms (about 0.2 ms each), against the
 * several writes of every call it authenticates.
 */
const TOKEN_CACHE_MS = 500;
const TOKEN_CACHE_MAX = 10_000;

export type Authenticate = (req: FastifyRequest) => Promise<void>;

/**
 * Bearer authentication: `Authorization: Bearer <token>` maps to one tenant and role (tokens are stored
 * hashed; the cache is keyed by the hash too, so no plain token is kept). A missing, unknown or revoked
 * token is 401 UNAUTHORIZED. The token is never logged.
 */
export function createAuthenticate(db: SagaDb): Authenticate {
  const cache = new Map<string, { principal: Principal; until: number }>();
  /** When this process last recorded each token's use: at most one UPDATE per token a minute from here. */
  const touched = new Map<string, number>();
  function noteUse(p: Principal, now: number, req: FastifyRequest): void {
    if ((touched.get(p.tokenId) ?? 0) > now - TOKEN_USE_RESOLUTION_S * 1000) return;
    if (touched.size >= TOKEN_CACHE_MAX) touched.clear();
    touched.set(p.tokenId, now);
    // Not awaited: `last used` is bookkeeping, never on the request's critical path.
    recordTokenUse(db, p.tokenId).catch((err: unknown) =>
      req.log.warn({ err }, 'recording token use failed'),
    );
  }
  return async (req) => {
    const header = req.headers.authorization;
    const token = bearerTokenOf(header);
    if (!token) throw new UnauthorizedError('missing bearer token (Authorization: Bearer <token>)');
    const hash = hashToken(token);
    const now = Date.now();
    const hit = cache.get(hash);
    if (hit && hit.until > now) {
      req.principal = hit.principal;
      noteUse(hit.principal, now, req);
      return;
    }
    const principal = await verifyApiToken(db, token);
    if (!principal) {
      cache.delete(hash);
      throw new UnauthorizedError('unknown, revoked or expired token');
    }
    if (cache.size >= TOKEN_CACHE_MAX) cache.clear();
    // Never trusted past its expiry (process clock here; the database's decides on the next lookup).
    const until = Math.min(now + TOKEN_CACHE_MS, principal.expiresAt?.getTime() ?? Infinity);
    cache.set(hash, { principal, until });
    req.principal = principal;
    noteUse(principal, now, req);
  };
}

/** The principal of an authenticated request. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new UnauthorizedError('not authenticated');
  return req.principal;
}

/**
 * The principal of a request that only an operator may make: every route of the review queues
 * (`/v1/approvals`, `/v1/cases`, `/v1/corrections`), reads included, since they carry evidence, customer
 * addresses and messages of the whole tenant, and the tenant's policy floor (`/v1/policy`), which exists to
 * bind agents. An agent token is refused with 403 FORBIDDEN, the message naming `what` it may not do; an
 * agent reads its own run's approvals through the run view (`GET /v1/runs/{id}`).
 */
export function operatorOf(req: FastifyRequest, what = 'read or decide the review queues'): Principal {
  const p = principalOf(req);
  if (p.role !== TokenRole.OPERATOR)
    throw new ForbiddenError(`this needs an operator token; an ${p.role} token may not ${what}`);
  return p;
}
