import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../src/process/free-port.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer((sock) => sock.end());
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

describe('freePort', () => {
  it('gives ports below the ephemeral range that outgoing connections take, never the same one twice', async () => {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const ports: number[] = [];
    for (let i = 0; i < 40; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(40);
    for (const p of ports) expect(p).toBeLessThan(Number(low));
    // Each can still be listened on (nothing took it meanwhile).
    for (const p of ports) servers.push(await listen(p));
  });

  it('skips a port something already listens on', async () => {
    const first = await freePort();
    // Occupy the next ports of the block; the ones handed out after are free ones.
    const held = await Promise.all([first + 1, first + 2, first + 3].map((p) => listen(p).catch(() => null)));
    for (const s of held) if (s) servers.push(s);
    const heldPorts = new Set(
      held.filter((s): s is Server => s !== null).map((s) => (s.address() as { port: number }).port),
    );
    for (let i = 0; i < 5; i++) {
      const p = await freePort();
      expect(heldPorts.has(p)).toBe(false);
      servers.push(await listen(p));
    }
  });
});
