import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalJson } from '../canonical-json.js';
import { pathOf } from '../faults/install-fault-hooks.js';
import type { IdempotencyStore } from './idempotency-store.js';

/** How one vendor speaks idempotency: which requests take part, and what its refusals look like. */
export interface IdempotencyPolicy {
  readonly store: IdempotencyStore;
  /** Whether the request takes part (e.g. only POST). */
  appliesTo(request: FastifyRequest): boolean;
  /** The key's scope (Stripe: the API key; others: one account). */
  scopeOf(request: FastifyRequest): string;
  /** Answers a refused request (mismatch, in flight, missing or invalid key); the hook then stops. */
  refuse(reply: FastifyReply, reason: IdempotencyRefusal, key: string | undefined): FastifyReply;
  /** Whether an answer with this status is saved (e.g. Resend keeps only successes). */
  saves(statusCode: number): boolean;
  /** Whether a request with no key must be refused (`missing`) rather than simply run. */
  readonly keyRequired: boolean;
  /** Longest accepted key (Stripe 255, Resend 256). */
  readonly maxKeyLength: number;
  /** Header sent on a replayed answer, if the vendor sends one. */
  readonly replayHeader: string | undefined;
}

export type IdempotencyRefusal = 'mismatch' | 'in_flight' | 'missing' | 'invalid';

interface Held {
  readonly scope: string;
  readonly key: string;
  discard: boolean;
}

const held = new WeakMap<FastifyRequest, Held>();
const replayed = new WeakSet<FastifyRequest>();

/** The request's `Idempotency-Key` header, if any. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const value = request.headers['idempotency-key'];
  return Array.isArray(value) ? value[0] : value;
}

/** Whether the answer to this request was replayed from the store. */
export function wasReplayed(request: FastifyRequest): boolean {
  return replayed.has(request);
}

/**
 * Marks the request's outcome as not to be saved: its parameters failed validation before the endpoint
 * began executing, so the key stays free for a corrected retry.
 */
export function discardIdempotentResult(request: FastifyRequest): void {
  const h = held.get(request);
  if (h !== undefined) h.discard = true;
}

/**
 * Claims the key in `preValidation` (the body is parsed by then), replays or refuses there, and saves the
 * answer in `onSend`. Register after the fault request hooks and before the fault response hook: a fault
 * that replaces the answer must find it already saved. The fingerprint is the method, the path and the
 * parsed body with keys sorted, so the same parameters in another order are the same request.
 */
export function installIdempotency(app: FastifyInstance, policy: IdempotencyPolicy): void {
  app.addHook('preValidation', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!policy.appliesTo(request)) return;
    const key = idempotencyKeyOf(request);
    if (key === undefined || key === '') {
      if (policy.keyRequired) return policy.refuse(reply, 'missing', undefined);
      return;
    }
    if (key.length > policy.maxKeyLength) return policy.refuse(reply, 'invalid', key);
    const scope = policy.scopeOf(request);
    const fingerprint = canonicalJson([request.method, pathOf(request.url), request.body ?? null]);
    const claim = policy.store.claim(scope, key, fingerprint);
    switch (claim.kind) {
      case 'claimed':
        held.set(request, { scope, key, discard: false });
        return;
      case 'replay': {
        replayed.add(request);
        if (policy.replayHeader !== undefined) reply.header(policy.replayHeader, 'true');
        return reply
          .code(claim.response.statusCode)
          .type(claim.response.contentType)
          .send(claim.response.body);
      }
      case 'mismatch':
      case 'in_flight':
        return policy.refuse(reply, claim.kind, key);
      default: {
        const never: never = claim;
        throw new Error(`unknown claim ${JSON.stringify(never)}`);
      }
    }
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const h = held.get(request);
    if (h === undefined) return payload;
    held.delete(request);
    if (h.discard || !policy.saves(reply.statusCode)) {
      policy.store.release(h.scope, h.key);
      return payload;
    }
    const contentType = reply.getHeader('content-type');
    policy.store.save(h.scope, h.key, {
      statusCode: reply.statusCode,
      body: typeof payload === 'string' ? payload : JSON.stringify(payload ?? null),
      contentType: typeof contentType === 'string' ? contentType : 'application/json; charset=utf-8',
    });
    return payload;
  });

  // A request that never reached onSend (an exception without an answer) must not hold its key forever.
  app.addHook('onResponse', (request: FastifyRequest, _reply, done) => {
    const h = held.get(request);
    if (h !== undefined) {
      held.delete(request);
      policy.store.release(h.scope, h.key);
    }
    done();
  });
}
