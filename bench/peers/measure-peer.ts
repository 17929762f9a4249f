import type { SagaDb } from '@agent-saga/core';
import type { BenchConfig } from '../bench-config.js';
import { runClosedLoop } from '../closed-loop-load.js';
import type { LatencySummary } from '../latency-summary.js';
import { perCallCosts, type PerCallCosts } from '../per-call-costs.js';
import { backgroundRates, pgDelta, readPgCounters, type PgCounters } from '../pg-counters.js';
import { PeerMode, type Peer } from './peer.js';

/** What one peer measured: the row of the side-by-side table. */
export interface PeerResult {
  readonly name: string;
  readonly mode: PeerMode;
  readonly unit: string;
  /** Units of work completed per second: in the window (closed loop), or over the drain. */
  readonly workPerSecond: number;
  /** Per-unit latency (closed loop only; a drain has no per-job latency worth quoting). */
  readonly latency: LatencySummary | null;
  /** Postgres counters per unit, over the window (closed loop) or over add + drain; null when not on Postgres. */
  readonly pg: PerCallCosts | null;
  readonly units: number;
  readonly seconds: number;
  readonly errors: number;
  readonly firstError: string | null;
}

/** Why 10 minutes: a stalled peer fails its row instead of hanging the whole bench. */
const DRAIN_TIMEOUT_MS = 600_000;

/**
 * Measures one peer with the same counters as agent-saga: a quiet window for the background rate, then
 * the load, the same settle pause and the same 'after' read. A closed-loop peer is measured like the
 * sustained phase (ramp, window, tail drained); a drain peer from before its jobs are added to after the
 * last completes (so its per-job figures include the enqueue), its rate over the drain only.
 */
export async function measurePeer(peer: Peer, db: SagaDb, config: BenchConfig): Promise<PeerResult> {
  const schema = peer.pgSchema ?? '';
  const background = await backgroundRates(db, schema, config.BENCH_QUIET_SECONDS);
  try {
    await peer.start();
    if (peer.mode === PeerMode.CLOSED_LOOP) {
      let before: PgCounters | undefined;
      const load = await runClosedLoop({
        concurrency: config.BENCH_CONCURRENCY,
        rampMs: config.BENCH_RAMP_SECONDS * 1000,
        durationMs: config.BENCH_SECONDS * 1000,
        op: (lane) => peer.call(lane),
        atWindowStart: async () => void (before = await readPgCounters(db, schema)),
      });
      await new Promise((r) => setTimeout(r, config.BENCH_STATS_SETTLE_MS));
      const after = await readPgCounters(db, schema);
      return {
        name: peer.name,
        mode: peer.mode,
        unit: peer.unit,
        workPerSecond: load.perSecond,
        latency: load.latency,
        pg:
          peer.pgSchema === null
            ? null
            : perCallCosts(pgDelta(before!, after), background, load.completedSinceWindowStart),
        units: load.completedSinceWindowStart,
        seconds: load.windowMs / 1000,
        errors: load.errors,
        firstError: load.firstError ?? null,
      };
    }
    const n = config.BENCH_DRAIN_JOBS;
    const before = await readPgCounters(db, schema);
    await peer.add(n);
    const t0 = performance.now();
    await Promise.race([
      peer.drain(n),
      new Promise((_, rej) =>
        setTimeout(() => rej(new Error(`${peer.name}: drain timed out`)), DRAIN_TIMEOUT_MS).unref(),
      ),
    ]);
    const seconds = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, config.BENCH_STATS_SETTLE_MS));
    const after = await readPgCounters(db, schema);
    return {
      name: peer.name,
      mode: peer.mode,
      unit: peer.unit,
      workPerSecond: n / seconds,
      latency: null,
      pg: peer.pgSchema === null ? null : perCallCosts(pgDelta(before, after), background, n),
      units: n,
      seconds,
      errors: 0,
      firstError: null,
    };
  } finally {
    await peer.stop();
  }
}

/** Runs `measure` and turns a failure into a row that says why, so one broken peer does not end the run. */
export async function measureOrExplain(peer: Peer, measure: () => Promise<PeerResult>): Promise<PeerResult> {
  try {
    return await measure();
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    console.error(`peer ${peer.name} failed: ${msg}`);
    return {
      name: peer.name,
      mode: peer.mode,
      unit: peer.unit,
      workPerSecond: NaN,
      latency: null,
      pg: null,
      units: 0,
      seconds: 0,
      errors: 1,
      firstError: msg.slice(0, 300),
    };
  }
}
