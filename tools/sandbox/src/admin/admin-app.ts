import Fastify, { type FastifyInstance } from 'fastify';
import { ZodError } from 'zod';
import type { SandboxAdmin } from '../sandbox-core.js';

/**
 * The admin API, on its own port so faults never touch it: `/__admin/faults`, `/__admin/ledger`,
 * `/__admin/config`, `/__admin/seed`, `/__admin/requests`, `/__admin/reset`. JSON in and out; a bad body
 * is a 400 `{ error: 'invalid_body', issues }`. Documented in docs/sandbox.md.
 */
export function createAdminApp(
  admin: SandboxAdmin,
  urls: () => Record<string, string>,
  logger: boolean,
): FastifyInstance {
  const app = Fastify({ logger: logger ? { level: 'info', base: { vendor: 'admin' } } : false });
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof ZodError)
      return reply.code(400).send({ error: 'invalid_body', issues: error.issues });
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status < 500)
      return reply.code(status).send({ error: 'bad_request', message: (error as Error).message });
    request.log.error(error);
    return reply.code(500).send({ error: 'internal_error' });
  });

  app.get('/__admin', () => ({ urls: urls(), settings: admin.settings() }));
  app.get('/__admin/ledger', () => admin.ledger());

  app.get('/__admin/faults', () => ({ faults: admin.faults() }));
  app.post('/__admin/faults', (request, reply) => reply.code(201).send(admin.addFault(request.body)));
  app.delete('/__admin/faults', (_request, reply) => {
    admin.clearFaults();
    return reply.code(204).send();
  });
  app.delete<{ Params: { id: string } }>('/__admin/faults/:id', (request, reply) =>
    admin.removeFault(request.params.id)
      ? reply.code(204).send()
      : reply.code(404).send({ error: 'not_found' }),
  );

  app.get('/__admin/config', () => admin.settings());
  app.post('/__admin/config', (request) => admin.configure(request.body));

  app.post('/__admin/seed', (request, reply) => {
    admin.seed(request.body);
    return reply.code(204).send();
  });

  app.get('/__admin/requests', () => ({ requests: admin.requests() }));
  app.delete('/__admin/requests', (_request, reply) => {
    admin.clearRequests();
    return reply.code(204).send();
  });

  app.post('/__admin/reset', (_request, reply) => {
    admin.reset();
    return reply.code(204).send();
  });
  return app;
}
