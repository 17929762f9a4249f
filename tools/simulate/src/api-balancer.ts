/**
 * The load balancer in front of the agent-saga harness's api replicas, as a deployment runs several api
 * processes behind one address: the agents and the operators call the balancer, which passes each request
 * to the next replica in turn. A replica that refuses the connection (killed, still booting) is skipped for
 * {@link DOWN_FOR_MS} and the request goes to the next one: nothing reached the refusing replica, so
 * nothing can be doubled (a passive health check, as nginx's `max_fails`). When every replica refuses (two
 * `api_restart` faults of concurrent episodes kill both at once; four processes then boot together on two
 * cores for some 5 s), the request waits and is tried again every {@link RETRY_EVERY_MS} for up to
 * {@link CONNECT_RETRY_MS}, as Envoy retries a `connect-failure`, then is answered 503 (Envoy's "no healthy
 * upstream"): nothing was sent. A replica that fails once it has the request (killed mid-call) is never
 * asked again for that request: the caller is answered 502, as nginx answers for a non-idempotent request
 * (`proxy_next_upstream` without `non_idempotent`), and decides itself whether to call again (agent-saga's
 * client sends a call again at its step index, which the dispatcher answers instead of acting twice).
 *
 * Both answers are the proxy's own plain-text pages, never a body in the dispatcher's error format: a
 * client must be able to tell a proxy's 5xx (no answer from the dispatcher) from the dispatcher's own.
 *
 * Why here and not a dependency: the simulation needs to know which replica holds a request (the
 * `api_restart` fault kills that one, kill-on-held-answer.ts), which a generic proxy does not tell.
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** Why 500 ms: a killed replica is started again after 300 ms and boots in about 1.5 s. */
const DOWN_FOR_MS = 500;
/** Why 5 s: most of the 5–7 s a simultaneous restart of both replicas took under load (3 December 2026). */
const CONNECT_RETRY_MS = 5_000;
/** Why 100 ms: a replica back from a kill is found within a tenth of its 1.5 s boot. */
const RETRY_EVERY_MS = 100;
/** Requests remembered after they end, to find the replica that last served an episode. */
const RECENT_KEPT = 512;

export interface ApiReplica {
  readonly name: string;
  /** `http://host:port` of the replica. */
  readonly url: string;
}

export interface ApiBalancer {
  /** Where the callers send their requests. */
  readonly url: string;
  /**
   * The replica holding a request whose method, path or body contains `text` (an episode's tag): one in
   * flight if there is one, else the one that served the latest such request; undefined when none did.
   */
  holderOf(text: string): string | undefined;
  /**
   * Requests passed on, per replica, and those answered 502 or 503 because the replica holding them failed
   * or no replica would take them.
   */
  readonly counts: { readonly served: ReadonlyMap<string, number>; readonly unavailable: number };
  close(): Promise<void>;
}

interface Forwarded {
  readonly text: string;
  readonly replica: string;
}

export async function startApiBalancer(
  replicas: readonly ApiReplica[],
  opts: { readonly port?: number; readonly connectRetryMs?: number } = {},
): Promise<ApiBalancer> {
  if (replicas.length === 0) throw new RangeError('the balancer needs at least one api replica');
  // Why a connection per request (no keep-alive to the replicas): a pooled socket to a replica just killed
  // fails only once a request is written to it, and that request is answered 502 though nothing read it.
  // A new connection to a dead replica is refused instead, and the request goes to the other one.
  const agent = new Agent({ keepAlive: false });
  const downUntil = new Map<string, number>();
  const inFlight = new Set<Forwarded>();
  const recent: Forwarded[] = [];
  const served = new Map<string, number>();
  let unavailable = 0;
  let next = 0;

  /** The replicas in the order to try them: round robin, those seen refusing lately last. */
  const order = (): ApiReplica[] => {
    const start = next++ % replicas.length;
    const turn = [...replicas.slice(start), ...replicas.slice(0, start)];
    const now = Date.now();
    const up = (r: ApiReplica) => (downUntil.get(r.name) ?? 0) <= now;
    return [...turn.filter(up), ...turn.filter((r) => !up(r))];
  };

  const forward = (
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    replica: ApiReplica,
    onRefused: () => void,
  ): ClientRequest => {
    const target = new URL(req.url ?? '/', replica.url);
    const entry: Forwarded = {
      text: `${req.method ?? ''} ${req.url ?? ''} ${body.toString()}`,
      replica: replica.name,
    };
    let answered = false;
    const out = httpRequest(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host }, agent },
      (upstream) => {
        answered = true;
        res.writeHead(upstream.statusCode ?? 502, upstream.headers);
        upstream.pipe(res);
        upstream.once('error', () => res.destroy());
        upstream.once('close', () => finish());
      },
    );
    const finish = () => {
      if (!inFlight.delete(entry)) return;
      recent.push(entry);
      if (recent.length > RECENT_KEPT) recent.shift();
    };
    inFlight.add(entry);
    served.set(replica.name, (served.get(replica.name) ?? 0) + 1);
    out.once('error', (err: NodeJS.ErrnoException) => {
      finish();
      if (answered) {
        res.destroy();
        return;
      }
      if (err.code === 'ECONNREFUSED') {
        served.set(replica.name, (served.get(replica.name) ?? 1) - 1);
        downUntil.set(replica.name, Date.now() + DOWN_FOR_MS);
        onRefused();
        return;
      }
      unavailable += 1;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`502 Bad Gateway: api replica ${replica.name}: ${err.message}\n`);
    });
    out.end(body);
    return out;
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => {
      const body = Buffer.concat(chunks);
      const giveUpAt = Date.now() + (opts.connectRetryMs ?? CONNECT_RETRY_MS);
      let candidates = order();
      let current: ClientRequest | undefined;
      // The caller gave up (its own timeout): the replica's request goes too, as a proxy's would.
      res.once('close', () => {
        if (!res.writableFinished) current?.destroy();
      });
      const tryNext = () => {
        const replica = candidates.shift();
        if (replica) {
          current = forward(req, res, body, replica, tryNext);
          return;
        }
        if (Date.now() < giveUpAt && !res.destroyed) {
          setTimeout(() => {
            candidates = order();
            tryNext();
          }, RETRY_EVERY_MS);
          return;
        }
        unavailable += 1;
        if (res.destroyed) return;
        res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' });
        res.end('no healthy upstream\n');
      };
      tryNext();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${bound}`,
    holderOf(text) {
      for (const f of inFlight) if (f.text.includes(text)) return f.replica;
      for (let i = recent.length - 1; i >= 0; i--)
        if (recent[i]!.text.includes(text)) return recent[i]!.replica;
      return undefined;
    },
    counts: {
      served,
      get unavailable() {
        return unavailable;
      },
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
