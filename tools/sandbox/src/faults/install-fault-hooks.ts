import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sleep } from '../sleep.js';
import type { Vendor } from '../vendors.js';
import type { FaultInjector } from './fault-injector.js';
import { DelayPhase, FaultKind, type FaultRule } from './fault-rule.js';

/** The fault that hit each request, from `onRequest` (where faults are matched) to `onSend`. */
const hits = new WeakMap<FastifyRequest, FaultRule>();
/** The raw body of each request a `redeliver` fault hit, to send it once more. */
const bodies = new WeakMap<FastifyRequest, Buffer>();

/**
 * The header that marks the sandbox's own resend of a `redeliver` fault: faults never match it, so the
 * count behind `nth` stays about the client's requests. It shows in the request log like any request.
 */
export const REDELIVERY_HEADER = 'x-sandbox-redelivery';

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

const isRedelivery = (request: FastifyRequest) => request.headers[REDELIVERY_HEADER] !== undefined;

/**
 * Registers the faults' request-side hooks, before the vendor's own hooks: its `onRequest` runs first, so
 * a dropped or answered request reaches neither authentication nor idempotency; its `preParsing` matches
 * the faults that look at content (`contains`) once the body is in, still before idempotency; its
 * `preValidation` (a `before_processing` delay) runs before the idempotency claim; its `preHandler` runs
 * after that claim, so a `during_processing` delay holds the key.
 */
export function installFaultRequestHooks(app: FastifyInstance, vendor: Vendor, faults: FaultInjector): void {
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (isRedelivery(request)) return;
    const rule = faults.match(vendor, request.method, pathOf(request.url));
    if (rule === undefined) return;
    hit(request, rule);
    return answerAtArrival(rule, request, reply);
  });

  // The vendor's parser then reads the same bytes from a new stream.
  app.addHook('preParsing', async (request: FastifyRequest, reply: FastifyReply, payload) => {
    if (isRedelivery(request)) return payload;
    const known = hits.get(request);
    const needsBody =
      known?.kind === FaultKind.REDELIVER || (known === undefined && faults.hasContentRules(vendor));
    if (!needsBody) return payload;
    const body = await readAll(payload);
    let rule = known;
    if (rule === undefined) {
      const text = `${request.url}\n${body.toString('utf8')}`;
      rule = faults.match(vendor, request.method, pathOf(request.url), text);
      if (rule !== undefined) {
        hit(request, rule);
        const answered = answerAtArrival(rule, request, reply);
        if (answered !== undefined) return answered;
      }
    }
    if (rule?.kind === FaultKind.REDELIVER) bodies.set(request, body);
    return Readable.from([body]);
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
    // After the idempotency claim (which read the whole request), before the handler: the omitted part
    // of the batch never runs.
    if (rule?.kind === FaultKind.PARTIAL_BATCH && typeof request.body === 'object' && request.body !== null) {
      const body = request.body as Record<string, unknown>;
      for (const field of rule.omit ?? []) delete body[field];
    }
  });

  // Registered before the vendor's own `onSend` (its idempotency store's), so the store saves the error.
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const rule = hits.get(request);
    if (rule?.kind !== FaultKind.PARTIAL_BATCH) return payload;
    rule.processed += 1;
    return replaceAnswer(reply, rule.status ?? 500, rule.body);
  });
}

/** Marks `request` as hit by `rule`, and notes which client port sent it. */
function hit(request: FastifyRequest, rule: FaultRule): void {
  hits.set(request, rule);
  rule.lastClientPort = request.socket.remotePort;
}

/** Replaces the answer with `status` and `body` (a gateway's HTML page when no body is given). */
function replaceAnswer(reply: FastifyReply, status: number, body: unknown): string {
  for (const name of Object.keys(reply.getHeaders())) {
    if (name !== 'content-length') reply.removeHeader(name);
  }
  reply.code(status);
  if (body === undefined) {
    reply.type('text/html');
    return GATEWAY_TIMEOUT_PAGE;
  }
  reply.type('application/json; charset=utf-8');
  return JSON.stringify(body);
}

/**
 * What a fault does as the request arrives: `drop` and `status` answer it (the reply is returned, for the
 * hook to return), the other kinds let it go on (undefined) and act later.
 */
function answerAtArrival(
  rule: FaultRule,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply | undefined {
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
    case FaultKind.REDELIVER:
    case FaultKind.PARTIAL_BATCH:
      return undefined;
    default: {
      const never: never = rule.kind;
      throw new Error(`unknown fault kind ${String(never)}`);
    }
  }
}

async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks);
}

/**
 * Registers the faults' response-side hooks. Must be the app's last `onSend` hook, so the idempotency store
 * has already saved the real answer when a fault replaces it: a retry then replays the real answer. A
 * `redeliver` resends the request once the first answer is out (`onResponse`), through the app itself, so
 * the resend meets the vendor's idempotency exactly as a second network delivery would.
 */
export function installFaultResponseHooks(app: FastifyInstance): void {
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const rule = hits.get(request);
    if (rule?.kind === FaultKind.ERROR_AFTER) return replaceAnswer(reply, rule.status ?? 504, rule.body);
    if (rule?.kind === FaultKind.RESET_AFTER) {
      request.raw.socket.destroy();
    }
    if (rule?.kind === FaultKind.DELAY && rule.phase === DelayPhase.AFTER_PROCESSING) {
      // The effect exists and the answer is saved; it waits here, where a caller may die before reading it.
      rule.processed += 1;
      await sleep(rule.delayMs ?? 0);
    }
    return payload;
  });

  app.addHook('onResponse', (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
    done();
    if (hits.get(request)?.kind !== FaultKind.REDELIVER) return;
    const body = bodies.get(request);
    // The resend's answer goes nowhere, as a duplicate delivery's does; a failure is the vendor's own.
    void app
      .inject({
        method: request.method as 'POST',
        url: request.url,
        headers: { ...request.headers, [REDELIVERY_HEADER]: '1' },
        ...(body === undefined || body.length === 0 ? {} : { payload: body }),
      })
      .catch((e: unknown) => request.log.warn({ err: e }, 'redelivery failed'));
  });
}
