/**
 * Restate (server 1.7.12 from `@restatedev/restate-server`, SDK `@restatedev/restate-sdk` 1.17.2): a
 * service whose handler runs one `ctx.run` step (a no-op) and returns, served by this process over HTTP/2;
 * each call is a request to the server's ingress (`POST /<service>/<handler>`), answered when the
 * invocation completes. The server is a single node on free ports with its data under a fresh temporary
 * directory, default settings (its durable state is its own log and RocksDB, not Postgres: no Postgres
 * figures). The server binary is spawned directly so it can be stopped by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Restate from '@restatedev/restate-sdk';
import { freePort } from '@agent-saga/core';
import { PeerMode, type ClosedLoopPeer, type PeerContext } from './peer.js';

/**
 * `@restatedev/restate-sdk` 1.17 declares no `engines` but calls `Promise.withResolvers` (Node 22) on every
 * invocation; Node 20 lacks it. This is the standard polyfill, installed only when missing, in the bench
 * process only (the SDK endpoint runs here).
 */
function polyfillWithResolvers(): void {
  const P = Promise as unknown as { withResolvers?: unknown };
  if (typeof P.withResolvers === 'function') return;
  P.withResolvers = function withResolvers<T>() {
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

const SERVICE = 'bench';
/** Why 60 s: a first start creates its partitions and elects leaders; on a loaded 2-core machine that is slow. */
const READY_TIMEOUT_MS = 60_000;

/** The server binary of this platform, from the optional dependency `@restatedev/restate-server` installs. */
function serverBinary(): string {
  const req = createRequire(import.meta.url);
  const launcher = req.resolve('@restatedev/restate-server/package.json');
  return createRequire(launcher).resolve(
    `@restatedev/restate-server-${process.platform}-${process.arch}/bin/restate-server`,
  );
}

/**
 * The SDK, loaded on first use: its console logger reads RESTATE_LOGGING when the module loads, and at its
 * default (INFO) it prints a line per invocation, which would be a good part of what it spends here.
 */
async function loadSdk(): Promise<typeof Restate> {
  process.env.RESTATE_LOGGING ??= 'WARN';
  return import('@restatedev/restate-sdk');
}

function oneStepService(restate: typeof Restate) {
  return restate.service({
    name: SERVICE,
    handlers: {
      oneStep: async (ctx: Restate.Context): Promise<number> => ctx.run('noop', () => 1),
    },
  });
}

export function restatePeer(ctx: PeerContext): ClosedLoopPeer {
  let server: ChildProcess | undefined;
  let out = '';
  let dir: string | undefined;
  let ingress = '';
  let endpointServer: { close(cb?: () => void): unknown } | undefined;
  return {
    name: 'Restate 1.7.12, one ctx.run step, over its ingress',
    mode: PeerMode.CLOSED_LOOP,
    pgSchema: null,
    unit: 'invocation (1 step)',
    async start() {
      polyfillWithResolvers();
      const [ingressPort, adminPort, nodePort, sdkPort] = await Promise.all([
        freePort(),
        freePort(),
        freePort(),
        freePort(),
      ]);
      dir = await mkdtemp(join(tmpdir(), `restate-bench-${ctx.stamp}-`));
      server = spawn(serverBinary(), [], {
        cwd: dir,
        env: {
          ...process.env,
          RESTATE_BASE_DIR: dir,
          RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingressPort}`,
          RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${adminPort}`,
          RESTATE_BIND_ADDRESS: `127.0.0.1:${nodePort}`,
          RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${nodePort}`,
          RESTATE_LOG_FORMAT: 'compact',
          RESTATE_LOG_FILTER: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      server.stdout?.on('data', (b: Buffer) => (out = (out + b.toString()).slice(-4000)));
      server.stderr?.on('data', (b: Buffer) => (out = (out + b.toString()).slice(-4000)));
      const restate = await loadSdk();
      const endpoint = restate.endpoint().bind(oneStepService(restate));
      const http2 = await import('node:http2');
      const s = http2.createServer(endpoint.http2Handler());
      await new Promise<void>((res) => s.listen(sdkPort, '127.0.0.1', res));
      endpointServer = s;
      const admin = `http://127.0.0.1:${adminPort}`;
      ingress = `http://127.0.0.1:${ingressPort}`;
      const deadline = Date.now() + READY_TIMEOUT_MS;
      for (;;) {
        if (server.exitCode !== null) throw new Error(`restate-server exited ${server.exitCode}: ${out}`);
        const r = await fetch(`${admin}/deployments`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ uri: `http://127.0.0.1:${sdkPort}`, force: true }),
          signal: AbortSignal.timeout(5_000),
        }).catch(() => undefined);
        if (r?.ok) break;
        if (Date.now() > deadline)
          throw new Error(`restate-server not ready after ${READY_TIMEOUT_MS} ms: ${out}`);
        await new Promise((res) => setTimeout(res, 250));
      }
      // The ingress accepts the service once the registration has reached it.
      for (;;) {
        const r = await fetch(`${ingress}/${SERVICE}/oneStep`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: 'null',
          signal: AbortSignal.timeout(5_000),
        }).catch(() => undefined);
        if (r?.ok) break;
        if (Date.now() > deadline)
          throw new Error(`restate ingress not serving after ${READY_TIMEOUT_MS} ms: ${r?.status} ${out}`);
        await new Promise((res) => setTimeout(res, 250));
      }
    },
    async call() {
      const r = await fetch(`${ingress}/${SERVICE}/oneStep`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: 'null',
      });
      if (!r.ok) throw new Error(`restate ingress ${r.status}: ${await r.text()}`);
      await r.arrayBuffer();
    },
    async stop() {
      // The server first: it holds HTTP/2 sessions open to the endpoint, which `close()` would wait for.
      if (server && server.exitCode === null) {
        const exited = new Promise((res) => server!.once('exit', res));
        server.kill('SIGTERM');
        const t = setTimeout(() => server?.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }
      if (endpointServer) {
        const s = endpointServer;
        // Why 2 s: sessions the server left half-open are not worth waiting for; the process exits anyway.
        await Promise.race([
          new Promise<void>((res) => s.close(() => res())),
          new Promise((r) => setTimeout(r, 2_000).unref()),
        ]);
      }
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}
