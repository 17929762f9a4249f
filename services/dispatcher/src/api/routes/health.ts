import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  currentSchemaVersion,
  EXPECTED_SCHEMA_VERSION,
  postgresProbe,
  probeDependency as probe,
} from '@agent-saga/core';
import type { ApiMetrics } from '../../metrics/api-metrics.js';
import type { ApiDeps } from '../api-deps.js';
import type { SettleWaiter } from '../settle-waiter.js';

const check = z.object({ ok: z.boolean(), detail: z.string().optional() });
const readiness = z.object({
  status: z.enum(['ready', 'unready']),
  checks: z.object({ database: check, schema: check, redis: check, listener: check }),
});

/**
 * Unauthenticated probes: /healthz (the process answers), /readyz (Postgres reachable at the schema version
 * this build expects, Redis reachable, the LISTEN connection up; each check bounded by core's
 * `READINESS_CHECK_TIMEOUT_MS`, so a 503 comes within it while a dependency is down), /metrics.
 */
export const healthRoutes: FastifyPluginAsyncZod<{
  deps: ApiDeps;
  waiter: SettleWaiter;
  metrics: ApiMetrics;
}> = (app, { deps, waiter, metrics }) => {
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
            throw new Error(`schema at ${found ?? '(none)'}, expected ${EXPECTED_SCHEMA_VERSION}`);
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

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const text = await metrics.registry.metrics();
    return reply.header('content-type', metrics.registry.contentType).send(text);
  });
  return Promise.resolve();
};
