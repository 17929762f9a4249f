import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { createApiMetrics, type ApiMetrics } from '../metrics/api-metrics.js';
import { ErrorCode, lazyChildLogger, sagaDbOptions, type Logger } from '@agent-saga/core';
import type { ApiDeps } from './api-deps.js';
import { refuseUnstorableText } from './refuse-unstorable-text.js';
import { createAuthenticate } from './auth.js';
import { createRateLimit } from './rate-limit.js';
import { toHttpError } from './http-errors.js';
import { callRoutes } from './routes/calls.js';
import { healthRoutes } from './routes/health.js';
import { runRoutes } from './routes/runs.js';
import { unwindRoutes } from './routes/unwind.js';
import { approvalRoutes } from './routes/approvals.js';
import { caseRoutes } from './routes/cases.js';
import { correctionRoutes } from './routes/corrections.js';
import { pivotRoutes } from './routes/pivot.js';
import { definitionRoutes } from './routes/definitions.js';
import { toolRoutes } from './routes/tools.js';
import { tenantPolicyRoutes } from './routes/tenant-policy.js';
import { createDeliveryGroup } from './delivery-group.js';
import { createIntakeGroup } from './grouped-intake.js';
import { createSettleWaiter, type SettleWaiter } from './settle-waiter.js';
import { consoleRoutes } from '../console/console-routes.js';

/** The fastify instance of the API: pino logger, zod type provider. */
export type ApiApp = FastifyInstance<Server, IncomingMessage, ServerResponse, Logger, ZodTypeProvider>;

export interface Api {
  readonly app: ApiApp;
  readonly waiter: SettleWaiter;
  readonly metrics: ApiMetrics;
}

/**
 * Builds the dispatcher's HTTP API from explicit dependencies. Nothing listens yet: call `app.listen` (or
 * `app.inject` in tests). `app.ready()` opens the LISTEN connection of the settle waiter; `app.close()`
 * first wakes every waiting call (they answer 202 at once), lets in-flight requests finish, then closes the
 * LISTEN connection. The caller owns `db` and `queue` and closes them after the app.
 */
export async function buildApi(deps: ApiDeps): Promise<Api> {
  const app = Fastify({
    loggerInstance: deps.logger,
    // A request's logger (its `reqId`) is made when a line is written through it: most requests write none
    // at the roles' level, and making a pino child per request costs its redacted bindings each time.
    childLoggerFactory: (logger, bindings, options) => lazyChildLogger(logger as Logger, bindings, options),
    // Big enough for tool arguments, small enough that a runaway model cannot fill memory.
    bodyLimit: 1024 * 1024,
    // The timeouts of a connection and of reading a request (see each setting's note in config.ts): a
    // client that sends its request slowly, or holds a connection silent, cannot hold a socket forever,
    // while a call waiting up to MAX_WAIT_MS for its step is never cut off.
    requestTimeout: deps.config.HTTP_REQUEST_TIMEOUT_MS,
    connectionTimeout: deps.config.HTTP_CONNECTION_TIMEOUT_MS,
    keepAliveTimeout: deps.config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    return503OnClosing: true,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('principal', null);

  const deliveries = createDeliveryGroup(deps.groupDb ?? deps.db);
  const intakes = createIntakeGroup(deps.groupDb ?? deps.db, deps.config.RELAY_GRACE_MS);
  const waiter = createSettleWaiter({
    db: { ...sagaDbOptions(deps.config, 'api-listen', 1), schema: deps.schema },
    logger: deps.logger,
  });
  const metrics = createApiMetrics(deps.db, deps.definitions?.list().map((d) => d.name) ?? []);
  app.addHook('onReady', () => waiter.start());
  // On close: waiting calls answer at once, and every answer from now on closes its connection. Without
  // that, a keep-alive connection whose request was in flight when close began stays open until its
  // keep-alive timeout (HTTP_KEEP_ALIVE_TIMEOUT_MS) and holds the drain up.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    waiter.drain();
    done();
  });
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onClose', () => waiter.close());

  app.setErrorHandler((err, req, reply) => {
    const mapped = toHttpError(err);
    if (mapped.internal) req.log.error({ err }, 'request failed');
    else req.log.info({ code: mapped.body.error.code, status: mapped.status }, 'request refused');
    return reply.code(mapped.status).send(mapped.body);
  });
  app.setNotFoundHandler((req, reply) =>
    reply
      .code(404)
      .send({ error: { code: ErrorCode.NOT_FOUND, message: `no route ${req.method} ${req.url}` } }),
  );

  await app.register(fastifySwagger, {
    openapi: {
      info: {
        title: 'agent-saga dispatcher',
        description:
          'Durable intake of side-effecting tool calls: every call is written as an intent before it is sent.',
        version: '0.1.0',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });

  await app.register(healthRoutes, { deps, waiter });
  await app.register(consoleRoutes); // the operator's web console at /console, outside the /v1 auth hook
  const authenticate = createAuthenticate(deps.db);
  const rateLimit = createRateLimit(deps.config.SAGA_RATE_LIMIT_PER_MINUTE);
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', authenticate);
      // After auth: only a known token spends from its bucket (an unknown one was answered 401).
      if (rateLimit) v1.addHook('onRequest', rateLimit);
      v1.addHook('preValidation', refuseUnstorableText);
      await v1.register(runRoutes, { deps, waiter });
      await v1.register(unwindRoutes, { deps });
      await v1.register(pivotRoutes, { deps });
      await v1.register(approvalRoutes, { deps });
      await v1.register(caseRoutes, { deps });
      await v1.register(correctionRoutes, { deps });
      await v1.register(definitionRoutes, { deps });
      await v1.register(toolRoutes, { deps });
      await v1.register(tenantPolicyRoutes, { deps });
      await v1.register(callRoutes, { ctx: { ...deps, waiter, metrics, deliveries, intakes } });
    },
    { prefix: '/v1' },
  );
  return { app, waiter, metrics };
}
