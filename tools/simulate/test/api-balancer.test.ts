import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiBalancer, type ApiBalancer } from '../src/api-balancer.js';

interface Backend {
  readonly name: string;
  readonly url: string;
  readonly bodies: string[];
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

async function backend(name: string, handle?: Handler): Promise<Backend> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.once('end', () => {
      bodies.push(body);
      if (handle) handle(req, res, body);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ by: name, body }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    name,
    url: `http://127.0.0.1:${port}`,
    bodies,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const post = (url: string, body: string) =>
  fetch(`${url}/v1/runs/r/calls`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

let open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.map((o) => o.close()));
  open = [];
});

async function balance(...backends: Backend[]): Promise<ApiBalancer> {
  return balanceWith({}, ...backends);
}

async function balanceWith(
  opts: { readonly connectRetryMs?: number },
  ...backends: Backend[]
): Promise<ApiBalancer> {
  const b = await startApiBalancer(
    backends.map((x) => ({ name: x.name, url: x.url })),
    opts,
  );
  open.push(b, ...backends);
  return b;
}

describe('the api balancer of the simulation', () => {
  it('passes requests to the replicas in turn, body and status intact', async () => {
    const one = await backend('api#1');
    const two = await backend('api#2');
    const b = await balance(one, two);
    const answers = [];
    for (let i = 0; i < 4; i++) {
      const res = await post(b.url, `{"i":${i}}`);
      expect(res.status).toBe(200);
      answers.push(((await res.json()) as { by: string; body: string }).body);
    }
    expect(answers).toEqual(['{"i":0}', '{"i":1}', '{"i":2}', '{"i":3}']);
    expect(one.bodies).toHaveLength(2);
    expect(two.bodies).toHaveLength(2);
  });

  it('sends a request a replica refused to the other one, so a killed replica costs the caller nothing', async () => {
    const one = await backend('api#1');
    const two = await backend('api#2');
    const b = await balance(one, two);
    await one.close();
    for (let i = 0; i < 4; i++) expect((await post(b.url, `{"i":${i}}`)).status).toBe(200);
    expect(two.bodies).toEqual(['{"i":0}', '{"i":1}', '{"i":2}', '{"i":3}']);
    expect(b.counts.unavailable).toBe(0);
  });

  it('holds a request while every replica refuses, and passes it on once one is up again', async () => {
    const one = await backend('api#1');
    const url = one.url;
    await one.close();
    const b = await balanceWith({ connectRetryMs: 5_000 }, one);
    const pending = post(b.url, '{"waited":true}');
    await new Promise((r) => setTimeout(r, 300));
    // The replica comes back on its port (a restart), and the held request reaches it.
    const port = Number(new URL(url).port);
    const back = createServer((_req, res) => res.writeHead(200).end('{"back":true}'));
    await new Promise<void>((r) => back.listen(port, '127.0.0.1', () => r()));
    open.push({ close: () => new Promise<void>((r) => back.close(() => r())) });
    const res = await pending;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ back: true });
  });

  it('answers 503 in plain text when no replica took the connection within the budget', async () => {
    const one = await backend('api#1');
    await one.close();
    const b = await balanceWith({ connectRetryMs: 300 }, one);
    const res = await post(b.url, '{}');
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('no healthy upstream\n');
    expect(b.counts.unavailable).toBe(1);
  });

  it('answers 502 when the replica holding the request dies, and never sends it to another', async () => {
    const dying = await backend('api#1', (req) => req.socket.destroy());
    const two = await backend('api#2');
    const b = await balance(dying, two);
    const res = await post(b.url, '{"charge":"once"}');
    expect(res.status).toBe(502);
    // The proxy's own page, never a body a client could take for the dispatcher's error.
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(dying.bodies).toEqual(['{"charge":"once"}']);
    expect(two.bodies).toEqual([]);
    expect(b.counts.unavailable).toBe(1);
  });

  it('tells which replica holds an episode’s call in flight, and which served it last', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const one = await backend('api#1', (_req, res) => void held.then(() => res.writeHead(200).end('{}')));
    const two = await backend('api#2');
    const b = await balance(one, two);
    const first = post(b.url, '{"tag":"ep-7"}');
    while (one.bodies.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(b.holderOf('ep-7')).toBe('api#1');
    expect((await post(b.url, '{"tag":"ep-8"}')).status).toBe(200);
    expect(b.holderOf('ep-8')).toBe('api#2');
    release();
    expect((await first).status).toBe(200);
    expect(b.holderOf('ep-7')).toBe('api#1');
    expect(b.holderOf('ep-9')).toBeUndefined();
  });
});
