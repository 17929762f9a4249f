import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sleep } from '../sleep.js';
import type { Vendor } from '../vendors.js';
import type { FaultInjector } from './fault-injector.js';
import { DelayPhase, FaultKind, type FaultRule } from './fault-rule.js';

/** The fault that hit each request, from `onRequest` (where faults are matched) to `onSend`. */
const hits = new WeakMap<FastifyRequest, FaultRule>();

/** The fault that hit this request, if any (for the request log). */
export function faultOf(request: FastifyRequest): FaultRule | undefined {
  return hits.get(request);
}

/** The body a `status` fault answers when its spec gives none. */
const DEFAULT_STATUS_BODY = { message: 'injected by the sandbox' };
/**
 * What a gateway's 504 looks like: an HTML page; the upstream's answer, and its headers, are lost. Not JSON
 * on purpose: a JSON body without an `error` key would be taken for a success by the Stripe client, which
 * reads the body, not the status.
 */
const GATEWAY_TIMEOUT_PAGE =
  '<html><head><title>504 Gateway Time-out</title></head><body><h1>504 Gateway Time-out</h1></body></html>';

export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/**
 * Registers the faults' request-side hooks, before the vendor's own hooks: its `onRequest` runs first, so
 * a dropped or answered request reaches neither authentication nor idempotency; its `preValidation` (a
 * `before_processing` delay) runs before the idempotency claim; its `preHandler` runs after that claim, so a
 * `during_processing` delay holds the key.
 */
export function installFaultRequestHooks(app: FastifyInstance, vendor: Vendor, faults: FaultInjector): void {
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const rule = faults.match(vendor, request.method, pathOf(request.url));
    if (rule === undefined) return;
    hits.set(request, rule);
    switch (rule.kind) {
      case FaultKind.DROP:
        reply.hijack();
        request.raw.socket.destroy();
        return reply;
      case FaultKind.STATUS:
        return reply
          .code(rule.status ?? 500)
          .headers(rule.headers ?? {})
          .send(rule.body ?? DEFAULT_STATUS_BODY);
      case FaultKind.DELAY:
      case FaultKind.ERROR_AFTER:
      case FaultKind.RESET_AFTER:
        return;
      default: {
        const never: never = rule.kind;
        throw new Error(`unknown fault kind ${String(never)}`);
      }
    }
  });

  // The body is read by now, so a request whose client has given up meanwhile is still processed after
  // the delay, as one held in a slow proxy would be. Runs before the idempotency claim (registered later).
  app.addHook('preValidation', async (request: FastifyRequest) => {
    const rule = hits.get(request);
    if (rule?.kind === FaultKind.DELAY && rule.phase === DelayPhase.BEFORE_PROCESSING) {
      await sleep(rule.delayMs ?? 0);
    }
  });

  app.addHook('preHandler', async (request: FastifyRequest) => {
    const rule = hits.get(request);
    if (rule?.kind === FaultKind.DELAY && rule.phase === DelayPhase.DURING_PROCESSING) {
      await sleep(rule.delayMs ?? 0);
    }
  });
}

/**
 * Registers the faults' response-side hook. Must be the app's last `onSend` hook, so the idempotency store
 * has already saved the real answer when a fault replaces it: a retry then replays the real answer.
 */
export function installFaultResponseHooks(app: FastifyInstance): void {
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const rule = hits.get(request);
    if (rule?.kind === FaultKind.ERROR_AFTER) {
      for (const name of Object.keys(reply.getHeaders())) {
        if (name !== 'content-length') reply.removeHeader(name);
      }
      reply.code(rule.status ?? 504);
      if (rule.body === undefined) {
        reply.type('text/html');
        return GATEWAY_TIMEOUT_PAGE;
      }
      reply.type('application/json; charset=utf-8');
      return JSON.stringify(rule.body);
    }
    if (rule?.kind === FaultKind.RESET_AFTER) {
      request.raw.socket.destroy();
    }
    return payload;
  });
}
