import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  currentSchemaVersion,
  EXPECTED_SCHEMA_VERSION,
  postgresProbe,
  probeDependency as probe,
  SchemaVersionMismatchError,
} from '@agent-saga/core';
import type { ApiDeps } from '../api-deps.js';
import type { SettleWaiter } from '../settle-waiter.js';

const check = z.object({ ok: z.boolean(), detail: z.string().optional() });
const readiness = z.object({
  status: z.enum(['ready', 'unready']),
  checks: z.object({ database: check, schema: check, redis: check, listener: check }),
});

/**
 * Unauthenticated probes on the API's port: /healthz (the process answers) and /readyz (Postgres reachable
 * at the schema version this build expects, Redis reachable, the LISTEN connection up; each check bounded
 * by core's `READINESS_CHECK_TIMEOUT_MS`, so a 503 comes within it while a dependency is down). Orchestrators
 * probe the main port without credentials, so /readyz says only which check failed and why in core's safe
 * words (`readinessDetail`: our own messages, a driver's error code), never a driver's message (it can name
 * a host, a user, a database).
 *
 * The metrics are not here: `bin/api.ts` serves them on the role's own listener (METRICS_HOST:METRICS_PORT,
 * 127.0.0.1 by default, behind METRICS_TOKEN when set), as every role does.
 */
export const healthRoutes: FastifyPluginAsyncZod<{
  deps: ApiDeps;
  waiter: SettleWaiter;
}> = (app, { deps, waiter }) => {
  app.get(
    '/healthz',
    { schema: { tags: ['health'], response: { 200: z.object({ status: z.literal('ok') }) } } },
    () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    { schema: { tags: ['health'], response: { 200: readiness, 503: readiness } } },
    async (_req, reply) => {
      const [database, schema, redis] = await Promise.all([
        probe(postgresProbe(deps.db)),
        probe(async () => {
          const found = await currentSchemaVersion(deps.db);
          if (found !== EXPECTED_SCHEMA_VERSION)
            throw new SchemaVersionMismatchError(EXPECTED_SCHEMA_VERSION, found);
        }),
        // The producer connection: with no offline queue, a Redis that is down fails this at once.
        probe(() => deps.queue.count()),
      ]);
      const listener = waiter.listening ? { ok: true } : { ok: false, detail: 'LISTEN connection down' };
      const checks = { database, schema, redis, listener };
      const ok = Object.values(checks).every((c) => c.ok);
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unready', checks });
    },
  );

  return Promise.resolve();
};
