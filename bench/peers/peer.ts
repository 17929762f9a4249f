import type { BenchConfig } from '../bench-config.js';

/** How a peer is driven: calls kept in flight (closed loop), or a backlog added and then drained. */
export const PeerMode = {
  /** BENCH_CONCURRENCY lanes, each starting its next call when the last one ends, for BENCH_SECONDS. */
  CLOSED_LOOP: 'closed-loop',
  /** BENCH_DRAIN_JOBS jobs added in bulk with no worker running; then workers start and drain them. */
  DRAIN: 'drain',
} as const;
export type PeerMode = (typeof PeerMode)[keyof typeof PeerMode];

/** What every peer gets: the bench's settings and a stamp that makes its schema, queue and ports its own. */
export interface PeerContext {
  readonly config: BenchConfig;
  /** `Date.now()` of this run, the suffix of every schema and queue name a peer creates. */
  readonly stamp: string;
  /** The bench's BullMQ prefix (its keys are deleted at the end of the run). */
  readonly queuePrefix: string;
}

interface PeerBase {
  /** The row label in the side-by-side table (system, version and how it is driven). */
  readonly name: string;
  /**
   * The Postgres schema that holds the peer's rows (its per-table row counts are read from it), or null
   * for a peer that keeps its state outside Postgres (its Postgres figures are then not reported).
   */
  readonly pgSchema: string | null;
  /** One line for the report: what a unit of work is for this peer. */
  readonly unit: string;
  /** Creates the peer's schema or server and everything it needs before the measured window. */
  start(): Promise<void>;
  /** Stops everything the peer started and removes its schema; safe to call after a failed start. */
  stop(): Promise<void>;
}

export interface ClosedLoopPeer extends PeerBase {
  readonly mode: typeof PeerMode.CLOSED_LOOP;
  /** One unit of work on `lane`, resolved when it is durably done. */
  call(lane: number): Promise<void>;
}

export interface DrainPeer extends PeerBase {
  readonly mode: typeof PeerMode.DRAIN;
  /** Enqueues `count` jobs (no worker runs yet). */
  add(count: number): Promise<void>;
  /** Starts the workers (BENCH_CONCURRENCY) and resolves once `count` jobs have completed. */
  drain(count: number): Promise<void>;
}

/** A system measured beside agent-saga in the same `pnpm bench` run (bench/peers/<peer>.ts). */
export type Peer = ClosedLoopPeer | DrainPeer;

/**
 * Why 60 s: every drain here moves at least a few hundred jobs a second; a minute without one finished job
 * means the jobs are gone (a Redis restarted under the bench loses them) or the worker is stuck.
 */
const STALL_MS = 60_000;

/**
 * Resolves when `done()` reaches `count`, polling every 20 ms; fails after `timeoutMs`, or when no job has
 * finished for {@link STALL_MS}.
 */
export async function waitForCount(
  what: string,
  done: () => number,
  count: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = done();
  let lastMoved = performance.now();
  while (done() < count) {
    const now = performance.now();
    if (done() !== last) {
      last = done();
      lastMoved = now;
    }
    if (now > deadline) throw new Error(`${what}: ${done()} of ${count} done after ${timeoutMs} ms`);
    if (now - lastMoved > STALL_MS)
      throw new Error(
        `${what}: stalled at ${done()} of ${count} (nothing finished for ${STALL_MS / 1000} s)`,
      );
    await new Promise((r) => setTimeout(r, 20));
  }
}
