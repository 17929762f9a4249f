import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { checkReadiness, type ReadinessProbes } from './readiness.js';

/** What a metrics endpoint serves: a prom-client `Registry` fits (or anything else that renders the text format). */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}

/** Where and how a role's metrics listener answers (from `METRICS_PORT`, `METRICS_HOST`, `METRICS_TOKEN`). */
export interface MetricsListenerOptions {
  readonly registry: MetricsSource;
  readonly port: number;
  /** The interface to bind: `127.0.0.1` unless the deployment scrapes from another host. */
  readonly host: string;
  /** When set, `GET /metrics` needs `Authorization: Bearer <token>`; `/healthz` and `/readyz` never do. */
  readonly token?: string | undefined;
  readonly readiness?: ReadinessProbes;
}

/**
 * The metrics listener of a role (every role, the API included: its main port serves no `/metrics`):
 * `GET /metrics` (Prometheus text; behind the bearer when a token is set), `GET /healthz` (the process
 * answers: 200) and `GET /readyz` (200 when every probe in `readiness` answers within its bound, 503 naming
 * what is down, in words safe to show: see `readinessDetail`). Bound to `host`, by default 127.0.0.1, so
 * metrics are not reachable from the network unless the deployment says so.
 */
export async function startMetricsServer(o: MetricsListenerOptions): Promise<Server> {
  const allowed = o.token === undefined ? () => true : bearerCheck(o.token);
  const server = createServer((req, res) => {
    const path = req.method === 'GET' ? req.url?.split('?')[0] : undefined;
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    switch (path) {
      case '/metrics':
        if (!allowed(req)) {
          res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
          return;
        }
        o.registry.metrics().then(
          (body) => res.writeHead(200, { 'content-type': o.registry.contentType }).end(body),
          () => res.writeHead(500).end(),
        );
        return;
      case '/healthz':
        json(200, { status: 'ok' });
        return;
      case '/readyz':
        void checkReadiness(o.readiness ?? {}).then((r) => json(r.status === 'ready' ? 200 : 503, r));
        return;
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  return server;
}

/**
 * Whether a request carries `Authorization: Bearer <token>`. Compared as sha256 digests with
 * `timingSafeEqual`, so neither the token's length nor its prefix leaks through the answer's timing.
 */
function bearerCheck(token: string): (req: IncomingMessage) => boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  const expected = digest(token);
  return (req) => {
    const m = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '');
    return m !== null && timingSafeEqual(digest(m[1]!), expected);
  };
}

export function stopMetricsServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
