import { createServer, type Server } from 'node:http';
import { checkReadiness, type ReadinessProbes } from './readiness.js';

/** What a metrics endpoint serves: a prom-client `Registry` fits (or anything else that renders the text format). */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}

/**
 * A minimal HTTP server for a worker process (relay, executor, reconciler, compensator), which has no API
 * server of its own: `GET /metrics` (Prometheus text), `GET /healthz` (the process answers: 200) and
 * `GET /readyz` (200 when every probe in `readiness` answers within its bound, 503 naming what is down;
 * the same body as the API's). Listens on all interfaces so a scraper in another container reaches it.
 */
export async function startMetricsServer(
  registry: MetricsSource,
  port: number,
  readiness: ReadinessProbes = {},
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = req.method === 'GET' ? req.url?.split('?')[0] : undefined;
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    switch (path) {
      case '/metrics':
        registry.metrics().then(
          (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
          (err: unknown) => res.writeHead(500).end(String(err)),
        );
        return;
      case '/healthz':
        json(200, { status: 'ok' });
        return;
      case '/readyz':
        void checkReadiness(readiness).then((r) => json(r.status === 'ready' ? 200 : 503, r));
        return;
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve());
  });
  return server;
}

export function stopMetricsServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
