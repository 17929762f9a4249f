import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { parseConfig } from '@agent-saga/core';

/** The repository root (bench/ lives one level below it). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const count = (def: number) => z.coerce.number().int().positive().default(def);
const seconds = (def: number) => z.coerce.number().positive().default(def);

/**
 * What `pnpm bench` reads from the environment (or the root `.env`, like `pnpm example`), parsed once.
 * Defaults keep the whole run under about a minute and a half on a 2-core machine.
 */
export const benchConfigSchema = z.object({
  DATABASE_URL: z.string().url(),
  REDIS_URL: z.string().url(),
  /** Calls before the unloaded measurement, not counted: JIT, pools, prepared plans. */
  BENCH_WARMUP_CALLS: count(50),
  /** Sequential calls of the unloaded latency phase. */
  BENCH_SEQUENTIAL_CALLS: count(300),
  /** Measured duration of each sustained phase (agent-saga, then the BullMQ baseline). */
  BENCH_SECONDS: seconds(15),
  /**
   * Load before each sustained phase's counters are read. Besides warming up, it makes the Postgres stats
   * error symmetric: a busy backend holds up to ~1 s of unflushed counts both when 'before' and when
   * 'after' is read (see pg-counters.ts).
   */
  BENCH_RAMP_SECONDS: seconds(2),
  /** Calls (jobs) in flight during the sustained phases. */
  BENCH_CONCURRENCY: count(50),
  /** Steps per run in the load loops: each call is a new step; a lane moves to a fresh run after this. */
  BENCH_STEPS_PER_RUN: count(20),
  /** `waitMs` of every call: how long the API may hold the request for the outcome. */
  BENCH_WAIT_MS: count(10_000),
  /** Pause before the 'after' counters are read, so backends flush pending stats (pg-counters.ts). */
  BENCH_STATS_SETTLE_MS: count(1_500),
  /** Quiet window before each sustained phase that measures what the rest of the cluster writes meanwhile. */
  BENCH_QUIET_SECONDS: seconds(2),
  /** Executor concurrency and database pool sizes given to the roles (product defaults). */
  EXECUTOR_CONCURRENCY: count(50),
  DB_POOL_SIZE: count(20),
  /**
   * `true`: the API runs each call's first attempt itself (SAGA_EXECUTE_INLINE), the executor takes only
   * what it leaves; `false`: the product default, every call through BullMQ to the executor.
   */
  BENCH_EXECUTE_INLINE: z.enum(['true', 'false']).default('false'),
  /**
   * When set, every role runs with `--cpu-prof` and writes its V8 CPU profiles under `<dir>/<role>/` when it exits
   * (one per thread: the largest is the main thread) (open
   * them in Chrome DevTools or speedscope): where each process spends its time under the bench's load.
   */
  BENCH_CPU_PROFILE_DIR: z.string().optional(),
  /** Jobs each drain peer (graphile-worker, pg-boss, BullMQ drain) adds in bulk and then drains. */
  BENCH_DRAIN_JOBS: count(20_000),
  /**
   * Which peers to measure (comma-separated names from bench/peers/all-peers.ts, or `all`, or `none`):
   * a subset when one peer is being looked at.
   */
  BENCH_PEERS: z.string().default('all'),
  /** Settled (CONFIRMED) saga-log rows of the sweep-cost phase: the small size and the large one. */
  BENCH_SCALE_SMALL: count(10_000),
  BENCH_SCALE_LARGE: count(1_000_000),
  /**
   * Timed rounds of each periodic query at each size (the median is reported). Why 40: the queries take
   * 0.3–2 ms, and with 15 rounds the worst ratio of an unchanged tree read 0.19–0.30 across three runs of
   * one afternoon (2026-12-06); 40 rounds cost about two seconds more.
   */
  BENCH_SCALE_REPEATS: count(40),
  /** One-step runs the compensator unwinds in the unwind phase, and its COMPENSATOR_CONCURRENCY. */
  BENCH_UNWIND_RUNS: count(2_000),
  BENCH_UNWIND_CONCURRENCY: count(50),
  /** Where the JSON result goes. */
  BENCH_RESULTS: z.string().default(resolve(REPO_ROOT, 'bench/results/latest.json')),
});
export type BenchConfig = Readonly<z.infer<typeof benchConfigSchema>>;

/**
 * `pnpm bench --quick`: the same phases and the same table, shorter (about a minute and a half on this
 * machine). Values set in the environment still win.
 */
export const QUICK_DEFAULTS: Readonly<Record<string, string>> = {
  BENCH_WARMUP_CALLS: '20',
  BENCH_SEQUENTIAL_CALLS: '100',
  BENCH_SECONDS: '4',
  BENCH_RAMP_SECONDS: '1',
  BENCH_QUIET_SECONDS: '1',
  BENCH_STATS_SETTLE_MS: '1200',
  BENCH_DRAIN_JOBS: '4000',
  // Why 10^5: a 10^6 bulk load takes most of a minute here; the ratio 10^5/10^4 still shows growth.
  BENCH_SCALE_LARGE: '100000',
  BENCH_SCALE_REPEATS: '7',
  BENCH_UNWIND_RUNS: '400',
};

/** Loads the root `.env` when present (values already in the environment win), then parses. */
export function loadBenchConfig(argv: readonly string[] = process.argv.slice(2)): BenchConfig {
  const dotenv = resolve(REPO_ROOT, '.env');
  if (existsSync(dotenv)) process.loadEnvFile(dotenv);
  const quick = argv.includes('--quick') ? QUICK_DEFAULTS : {};
  return parseConfig(benchConfigSchema, { ...quick, ...process.env });
}
