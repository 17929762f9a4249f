import type { CpuUsage } from './cpu-usage.js';
import type { LatencySummary } from './latency-summary.js';
import type { MachineInfo } from './machine-info.js';
import type { PerCallCosts } from './per-call-costs.js';
import type { PeerResult } from './peers/measure-peer.js';
import type { ProcessMemory } from './role-memory.js';
import type { SagaLogLatency } from './saga-log-latency.js';
import type { SideBySideRow } from './side-by-side.js';
import type { SweepCost } from './sweep-cost.js';
import type { UnwindResult } from './unwind-phase.js';
import type { WalByRelation } from './wal-by-relation.js';

/** Everything one `pnpm bench` run measured; printed as a table and written as JSON. */
export interface BenchResult {
  readonly startedAt: string;
  readonly durationSeconds: number;
  readonly machine: MachineInfo;
  readonly settings: Readonly<Record<string, number>>;
  /** Sequential calls, one at a time, on an idle system. */
  readonly unloaded: {
    readonly calls: number;
    /** Client-observed: `saga.call` from request to CONFIRMED answer. */
    readonly client: LatencySummary;
    readonly sagaLog: SagaLogLatency;
  };
  /** BENCH_CONCURRENCY calls in flight for BENCH_SECONDS. */
  readonly sustained: {
    readonly concurrency: number;
    readonly windowSeconds: number;
    readonly callsPerSecond: number;
    readonly client: LatencySummary;
    readonly sagaLog: SagaLogLatency;
    readonly errors: number;
    readonly firstError: string | null;
    readonly runsCreatedOnTheFly: number;
    readonly pg: PerCallCosts;
    /** CPU seconds by process over the measured window (drain included). */
    readonly cpu: CpuUsage;
    /** Each role's resident memory right after the window, and its peak (role-memory.ts). */
    readonly roleMemory: Readonly<Record<string, ProcessMemory>>;
    /** The window's WAL by relation and record type, per call (null without pg_walinspect). */
    readonly walByRelation: WalByRelation | null;
  };
  /** Bare BullMQ add-and-process with one INSERT per job, same concurrency and duration. */
  readonly baseline: {
    readonly windowSeconds: number;
    readonly jobsPerSecond: number;
    /** Producer-observed: `queue.add` to the job's `completed` event. */
    readonly latency: LatencySummary;
    readonly errors: number;
    readonly firstError: string | null;
    readonly pg: PerCallCosts;
    readonly cpu: CpuUsage;
  };
  /** Every peer of bench/peers/, measured in this run after the baseline. */
  readonly peers: readonly PeerResult[];
  /** The one table: agent-saga, the baseline and each peer, per unit of work, with agent-saga's ratios. */
  readonly sideBySide: readonly SideBySideRow[];
  /** The periodic queries' median time with a small and a large saga log. */
  readonly sweepCost: SweepCost;
  /** The compensator unwinding one-step runs. */
  readonly unwind: UnwindResult;
  /** agent-saga ÷ baseline. */
  readonly ratios: {
    readonly throughput: number;
    readonly p50: number;
    readonly p99: number;
    readonly writeXacts: number;
    readonly walBytes: number;
  };
  /** The aims, beside what was measured (not asserted). */
  readonly targets: readonly {
    readonly figure: string;
    readonly target: string;
    readonly measured: number;
    readonly unit: string;
    readonly met: boolean;
  }[];
  /** How the roles ended (a drained process exits 0). */
  readonly shutdown: readonly { role: string; code: number | null; killed: boolean }[];
}
