import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { FaultInjector } from '../faults/fault-injector.js';
import { FaultKind } from '../faults/fault-rule.js';
import {
  faultOf,
  installFaultRequestHooks,
  installFaultResponseHooks,
  pathOf,
} from '../faults/install-fault-hooks.js';
import { idempotencyKeyOf, wasReplayed } from '../idempotency/install-idempotency.js';
import type { Vendor } from '../vendors.js';
import type { RequestLog, RequestLogEntry } from './request-log.js';

/** What every vendor server shares: the armed faults, the request log, and whether to log. */
export interface VendorAppDeps {
  readonly faults: FaultInjector;
  readonly requestLog: RequestLog;
  readonly logger: boolean;
}

export interface VendorAppOptions {
  /** Parses the query string (Stripe's nested `created[gte]=…` needs `qs`). */
  readonly querystringParser?: (query: string) => Record<string, unknown>;
  /** Registers the vendor's auth, idempotency, parsers, error handler and routes. */
  readonly setup: (app: FastifyInstance) => void;
}

/**
 * Builds one vendor's server with the hooks in the order the fault model needs: log, faults (request side),
 * then the vendor's own hooks and routes, then faults (response side), last among `onSend` hooks.
 */
export function createVendorApp(
  vendor: Vendor,
  deps: VendorAppDeps,
  options: VendorAppOptions,
): FastifyInstance {
  const app = Fastify({
    logger: deps.logger ? { level: 'info', base: { vendor } } : false,
    routerOptions: {
      ...(options.querystringParser === undefined ? {} : { querystringParser: options.querystringParser }),
    },
    // Why: fault tests hold requests open on purpose; the client's timeout, not ours, should end them.
    requestTimeout: 0,
    // Why: a test's close() must not wait for requests a delay fault is holding.
    forceCloseConnections: true,
  });
  installRequestLog(app, vendor, deps.requestLog);
  installFaultRequestHooks(app, vendor, deps.faults);
  options.setup(app);
  installFaultResponseHooks(app);
  return app;
}

function installRequestLog(app: FastifyInstance, vendor: Vendor, log: RequestLog): void {
  const entries = new WeakMap<FastifyRequest, RequestLogEntry>();
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    const entry: RequestLogEntry = {
      at: new Date().toISOString(),
      vendor,
      method: request.method,
      path: pathOf(request.url),
      idempotencyKey: idempotencyKeyOf(request),
      traceparent: typeof request.headers.traceparent === 'string' ? request.headers.traceparent : undefined,
      statusCode: undefined,
      replayed: false,
      fault: undefined,
    };
    entries.set(request, entry);
    log.add(entry);
    // A dropped request never reaches onResponse; its fault is recorded when its socket closes.
    request.raw.once('close', () => {
      entry.fault = faultOf(request)?.kind;
    });
    done();
  });
  app.addHook('onResponse', async (request, reply) => {
    const entry = entries.get(request);
    if (entry === undefined) return;
    const fault = faultOf(request);
    entry.fault = fault?.kind;
    entry.replayed = wasReplayed(request);
    entry.statusCode = fault?.kind === FaultKind.RESET_AFTER ? undefined : reply.statusCode;
  });
}
