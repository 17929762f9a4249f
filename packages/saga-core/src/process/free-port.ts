import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that is free now and that nothing else on this machine will take before the
 * caller's child process listens on it: the tests, the demo, the example, the simulator and the benchmark
 * start roles so, telling each its port before it listens.
 *
 * Why not the OS's pick (`listen(0)`): the OS picks from its ephemeral range, the same range it takes the
 * local port of every outgoing connection from. Between this answer and the child's `listen`, a Postgres
 * or Redis client connecting anywhere on the machine may be given that very port, and the child fails
 * with EADDRINUSE (seen in CI: a test's api could not start). So the port comes from below the ephemeral
 * range, where no outgoing connection is ever placed, from a block of its own for each process (the
 * vitest worker's pool id, else the process id), and never twice in one process; a port that something
 * already listens on is skipped. Where the ephemeral range leaves no room below it, the OS picks.
 */
export async function freePort(): Promise<number> {
  const block = portBlock();
  if (block === null) return listenAndRelease(0);
  for (let tried = 0; tried < block.size; tried++) {
    const port = block.first + ((block.next++ - block.first) % block.size);
    if (given.has(port)) continue;
    given.add(port);
    try {
      return await listenAndRelease(port);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
  return listenAndRelease(0);
}

/** Ports this process has handed out: never handed out twice. */
const given = new Set<number>();

/** Where the blocks start: above the ports well-known services use (5432, 6379, 5672, 9090 …). */
const LOWEST = 10_000;
/** Ports in each process's block. */
const BLOCK_SIZE = 500;

interface PortBlock {
  readonly first: number;
  readonly size: number;
  next: number;
}

let block: PortBlock | null | undefined;

/** This process's block of ports below the ephemeral range, or null when there is no room for blocks. */
function portBlock(): PortBlock | null {
  if (block !== undefined) return block;
  const below = ephemeralRangeStart();
  const blocks = Math.floor((below - LOWEST) / BLOCK_SIZE);
  if (blocks < 2) return (block = null);
  const pool = Number(process.env.VITEST_POOL_ID);
  const slot = (Number.isInteger(pool) && pool > 0 ? pool : process.pid) % blocks;
  const first = LOWEST + slot * BLOCK_SIZE;
  // A random start within the block: two runs of one slot at once (a test beside the demo) rarely meet.
  return (block = { first, size: BLOCK_SIZE, next: first + Math.floor(Math.random() * BLOCK_SIZE) });
}

/** The first port of the OS's ephemeral range (Linux; elsewhere IANA's 49152). */
function ephemeralRangeStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const n = Number(low);
    return Number.isInteger(n) && n > 0 ? n : 49_152;
  } catch {
    return 49_152;
  }
}

function listenAndRelease(port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolvePort(bound));
    });
  });
}
