import type { LatencySummary } from './latency-summary.js';
import type { PerCallCosts } from './per-call-costs.js';
import type { PeerResult } from './peers/measure-peer.js';

/** One system's row of the side-by-side table: the same figures for every system, per unit of its work. */
export interface SideBySideRow {
  readonly system: string;
  readonly unit: string;
  readonly workPerSecond: number;
  /** NaN where it does not apply (a drain has no per-job latency). */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Per unit of work; NaN for a system that keeps its state outside Postgres. */
  readonly commits: number;
  readonly writeXacts: number;
  readonly walFlushes: number;
  readonly walBytes: number;
  /** agent-saga ÷ this system (1 on agent-saga's own row): work/s, WAL flushes, WAL bytes per unit. */
  readonly sagaRatio: {
    readonly workPerSecond: number;
    readonly walFlushes: number;
    readonly walBytes: number;
  };
  readonly error: string | null;
}

interface Measured {
  readonly name: string;
  readonly unit: string;
  readonly workPerSecond: number;
  readonly latency: LatencySummary | null;
  readonly pg: PerCallCosts | null;
  readonly firstError?: string | null;
}

/** agent-saga, the bare BullMQ + INSERT baseline and every peer, with agent-saga's ratio to each. */
export function sideBySide(input: {
  readonly saga: Measured;
  readonly baseline: Measured;
  readonly peers: readonly PeerResult[];
}): SideBySideRow[] {
  const saga = input.saga;
  const row = (m: Measured): SideBySideRow => ({
    system: m.name,
    unit: m.unit,
    workPerSecond: m.workPerSecond,
    p50Ms: m.latency?.p50 ?? NaN,
    p99Ms: m.latency?.p99 ?? NaN,
    commits: m.pg?.commits ?? NaN,
    writeXacts: m.pg?.writeXactsNet ?? NaN,
    walFlushes: m.pg?.walSyncs ?? NaN,
    walBytes: m.pg?.walBytesNet ?? NaN,
    sagaRatio: {
      workPerSecond: saga.workPerSecond / m.workPerSecond,
      walFlushes: (saga.pg?.walSyncs ?? NaN) / (m.pg?.walSyncs ?? NaN),
      walBytes: (saga.pg?.walBytesNet ?? NaN) / (m.pg?.walBytesNet ?? NaN),
    },
    error: m.firstError ?? null,
  });
  return [row(saga), row(input.baseline), ...input.peers.map((p) => row({ ...p, name: p.name }))];
}
