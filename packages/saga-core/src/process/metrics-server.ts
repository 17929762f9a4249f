import { createServer, type Server } from 'node:http';

/** What a metrics endpoint serves: a prom-client `Registry` fits (or anything else that renders the text format). */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}

/**
 * A minimal HTTP server for `GET /metrics` of a worker process (relay, executor, reconciler), which has no
 * API server of its own. Listens on all interfaces so a scraper in another container reaches it.
 */
export async function startMetricsServer(registry: MetricsSource, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
      (err: unknown) => res.writeHead(500).end(String(err)),
    );
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
