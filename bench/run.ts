/**
 * `pnpm bench`: latency and throughput of agent-saga for a no-op tool, beside a bare BullMQ baseline
 * measured in the same run (see docs/benchmarks.md for what each figure means).
 *
 *  1. a fresh schema `bench_<ts>` (migrated), a queue prefix `bench-<ts>`, a token, pre-created runs;
 *  2. api, relay and executor as three processes, from dist as in production (`pnpm bench` runs
 *     `pnpm build` first), on bench/noop-tools.ts;
 *  3. unloaded: warm-up, then sequential calls → client latency and intent → CONFIRMED from the saga log;
 *  4. sustained: BENCH_CONCURRENCY calls in flight for BENCH_SECONDS → calls/s, latency, and Postgres
 *     commits and WAL per call; then the roles are stopped (SIGTERM, drained);
 *     (before they stop, the unwind phase's one-step runs are made and asked to unwind);
 *  5. unwind: a compensator process unwinds those runs → runs unwound per second;
 *  6. baseline: a BullMQ worker process doing one INSERT per job, same concurrency and duration;
 *  7. peers (bench/peers/): DBOS, Restate, graphile-worker, pg-boss, BullMQ drains, one after another,
 *     each measured with the same counters, each in its own schema;
 *  8. sweep cost: the periodic queries timed with a small and a large saga log, each in a schema of its
 *     own (`<schema>_small`, `<schema>_large`, dropped after it), interleaved;
 *  9. the side-by-side table and the rest of the report on stdout and in bench/results/latest.json; the
 *     schemas and Redis keys are removed.
 *
 * `pnpm bench --quick` runs the same phases, shorter (bench-config.ts, QUICK_DEFAULTS).
 */
import { createSagaClient } from '@agent-saga/client';
import { loadBenchConfig, type BenchConfig } from './bench-config.js';
import type { BenchResult } from './bench-result.js';
import { createBenchSchema, createRuns } from './bench-schema.js';
import { startBullmqBaseline, type BullmqBaseline } from './bullmq-baseline.js';
import { Queue } from './bullmq.js';
import { runClosedLoop } from './closed-loop-load.js';
import { cpuUsage, readCpu, type CpuSnapshot } from './cpu-usage.js';
import { readRoleMemory } from './role-memory.js';
import { startDispatcherRoles, type DispatcherRoles } from './dispatcher-roles.js';
import { machineInfo } from './machine-info.js';
import { perCallCosts } from './per-call-costs.js';
import { backgroundRates, pgDelta, readPgCounters, type PgCounters } from './pg-counters.js';
import { deleteKeysWithPrefix, redisVersion } from './redis-keys.js';
import { formatReport, writeResultJson } from './report.js';
import { createSagaLanes } from './saga-call-lanes.js';
import { sagaLogLatency } from './saga-log-latency.js';
import { runSequential } from './sequential-latency.js';
import { selectedPeerNames, selectPeers } from './peers/all-peers.js';
import { measureOrExplain, measurePeer, type PeerResult } from './peers/measure-peer.js';
import { sideBySide } from './side-by-side.js';
import { measureSweepCost } from './sweep-cost.js';
import { readWalByRelation } from './wal-by-relation.js';
import { measureUnwind, prepareUnwind } from './unwind-phase.js';

/** An upper bound of calls per second, to size the pool of pre-created runs (more are made if needed). */
const MAX_EXPECTED_RATE = 4_000;

const say = (line: string) => console.log(`· ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(config: BenchConfig): Promise<BenchResult> {
  const startedAt = new Date();
  const t0 = performance.now();
  const bench = await createBenchSchema(config);
  const { db, schema } = bench;
  let redisHandle: Queue | undefined;
  let roles: DispatcherRoles | undefined;
  let baseline: BullmqBaseline | undefined;
  try {
    // A queue handle used only for its Redis connection: the server's version and the final cleanup.
    redisHandle = new Queue('bench-redis', {
      connection: { url: config.REDIS_URL, maxRetriesPerRequest: null },
      prefix: bench.queuePrefix,
    });
    say(`schema ${schema}, queue prefix ${bench.queuePrefix}`);
    const machine = await machineInfo(db, await redisVersion(redisHandle));
    const perRun = config.BENCH_STEPS_PER_RUN;
    const unloadedRuns = await createRuns(
      db,
      'u',
      Math.ceil((config.BENCH_WARMUP_CALLS + config.BENCH_SEQUENTIAL_CALLS) / perRun) + 1,
    );
    const loadRuns = await createRuns(
      db,
      'l',
      config.BENCH_CONCURRENCY +
        Math.ceil(((config.BENCH_RAMP_SECONDS + config.BENCH_SECONDS) * MAX_EXPECTED_RATE) / perRun),
    );

    say('starting api, relay and executor …');
    roles = await startDispatcherRoles(config, bench);
    const client = createSagaClient({ baseUrl: roles.baseUrl, token: bench.token });

    say(`unloaded: ${config.BENCH_WARMUP_CALLS} warm-up + ${config.BENCH_SEQUENTIAL_CALLS} sequential calls`);
    const seqLanes = createSagaLanes({
      client,
      runIds: unloadedRuns,
      stepsPerRun: perRun,
      waitMs: config.BENCH_WAIT_MS,
    });
    const seq = await runSequential({
      warmup: config.BENCH_WARMUP_CALLS,
      count: config.BENCH_SEQUENTIAL_CALLS,
      op: () => seqLanes.call(0),
    });
    const seqLog = await sagaLogLatency(db, seq.values);
    roles.assertRunning();

    say(`quiet window (${config.BENCH_QUIET_SECONDS} s), then ${config.BENCH_CONCURRENCY} calls in flight`);
    const sagaBackground = await backgroundRates(db, schema, config.BENCH_QUIET_SECONDS);
    const loadLanes = createSagaLanes({
      client,
      runIds: loadRuns,
      stepsPerRun: perRun,
      waitMs: config.BENCH_WAIT_MS,
    });
    let sagaBefore: PgCounters | undefined;
    let sagaCpuBefore: CpuSnapshot | undefined;
    const sagaPids = {
      pids: {
        'bench client': process.pid,
        ...Object.fromEntries(roles.children.map((c) => [c.name, c.child.pid])),
      },
    };
    const load = await runClosedLoop({
      concurrency: config.BENCH_CONCURRENCY,
      rampMs: config.BENCH_RAMP_SECONDS * 1000,
      durationMs: config.BENCH_SECONDS * 1000,
      op: (lane) => loadLanes.call(lane),
      atWindowStart: async () => {
        sagaBefore = await readPgCounters(db, schema);
        sagaCpuBefore = await readCpu(sagaPids);
      },
    });
    const sagaCpu = cpuUsage(sagaCpuBefore!, await readCpu(sagaPids), machine.cores);
    const roleMemory = await readRoleMemory(
      Object.fromEntries(roles.children.map((c) => [c.name, c.child.pid])),
    );
    await sleep(config.BENCH_STATS_SETTLE_MS);
    const sagaAfter = await readPgCounters(db, schema);
    const walByRelation = await readWalByRelation(
      db,
      schema,
      [sagaBefore!.walLsn, sagaAfter.walLsn],
      load.completedSinceWindowStart,
    );
    const loadLog = await sagaLogLatency(db, load.values);
    roles.assertRunning();
    say(`unwind set-up: ${config.BENCH_UNWIND_RUNS} one-step runs, each asked to unwind`);
    const unwindRuns = await prepareUnwind(db, client, config);
    say('stopping the roles (SIGTERM, drain)');
    const shutdown = await roles.stop();
    roles = undefined;

    say(`unwind: a compensator (concurrency ${config.BENCH_UNWIND_CONCURRENCY}) unwinds them`);
    const unwind = await measureUnwind(db, config, bench, unwindRuns.length);

    say(`baseline: quiet window, then bare BullMQ + 1 INSERT per job, ${config.BENCH_CONCURRENCY} in flight`);
    const baseBackground = await backgroundRates(db, schema, config.BENCH_QUIET_SECONDS);
    baseline = await startBullmqBaseline(config, bench);
    const activeBaseline = baseline;
    let baseBefore: PgCounters | undefined;
    let baseCpuBefore: CpuSnapshot | undefined;
    const basePids = { pids: { 'bench client': process.pid, 'baseline worker': baseline.workerPid } };
    const base = await runClosedLoop({
      concurrency: config.BENCH_CONCURRENCY,
      rampMs: config.BENCH_RAMP_SECONDS * 1000,
      durationMs: config.BENCH_SECONDS * 1000,
      op: (lane) => activeBaseline.job(lane),
      atWindowStart: async () => {
        baseBefore = await readPgCounters(db, schema);
        baseCpuBefore = await readCpu(basePids);
      },
    });
    const baseCpu = cpuUsage(baseCpuBefore!, await readCpu(basePids), machine.cores);
    await sleep(config.BENCH_STATS_SETTLE_MS);
    const baseAfter = await readPgCounters(db, schema);
    const baseClose = await baseline.close();
    baseline = undefined;

    const peerCtx = { config, stamp: schema.replace(/^bench_/, ''), queuePrefix: bench.queuePrefix };
    const peers: PeerResult[] = [];
    for (const peer of selectPeers(config.BENCH_PEERS, peerCtx)) {
      say(`peer: ${peer.name}`);
      peers.push(await measureOrExplain(peer, () => measurePeer(peer, db, config)));
    }

    say(`sweep cost: loading settled steps (${config.BENCH_SCALE_SMALL} and ${config.BENCH_SCALE_LARGE})`);
    const sweepCost = await measureSweepCost(
      { db, schema, url: config.DATABASE_URL },
      {
        small: config.BENCH_SCALE_SMALL,
        large: config.BENCH_SCALE_LARGE,
        repeats: config.BENCH_SCALE_REPEATS,
      },
      say,
    );

    const sagaPg = perCallCosts(
      pgDelta(sagaBefore!, sagaAfter),
      sagaBackground,
      load.completedSinceWindowStart,
    );
    const basePg = perCallCosts(
      pgDelta(baseBefore!, baseAfter),
      baseBackground,
      base.completedSinceWindowStart,
    );
    const unloadedLog = seqLog.intentToConfirmed;
    const walRecordsPerCall = walByRelation?.recordsPerCall ?? sagaPg.walRecords;
    const sagaCpuPerCall =
      (Object.entries(sagaCpu.cpuSeconds)
        .filter(([name]) => name !== 'other')
        .reduce((sum, [, secs]) => sum + secs, 0) *
        1000) /
      sagaPg.calls;
    const maxPeakMiB = Math.max(0, ...Object.values(roleMemory).map((m) => m.peakMiB));
    const table = sideBySide({
      saga: {
        name: 'agent-saga (HTTP API, 50 in flight)',
        unit: 'durable call',
        workPerSecond: load.perSecond,
        latency: load.latency,
        pg: sagaPg,
      },
      baseline: {
        name: 'bare BullMQ worker + 1 INSERT per job (baseline)',
        unit: 'job',
        workPerSecond: base.perSecond,
        latency: base.latency,
        pg: basePg,
      },
      peers,
    });
    const dbos = peers.find((p) => p.name.startsWith('DBOS') && p.name.endsWith('in process'));
    const worstSweep = Math.max(...sweepCost.rows.map((r) => Math.abs(r.ratio - 1)));
    return {
      startedAt: startedAt.toISOString(),
      durationSeconds: (performance.now() - t0) / 1000,
      machine,
      settings: {
        BENCH_WARMUP_CALLS: config.BENCH_WARMUP_CALLS,
        BENCH_SEQUENTIAL_CALLS: config.BENCH_SEQUENTIAL_CALLS,
        BENCH_SECONDS: config.BENCH_SECONDS,
        BENCH_RAMP_SECONDS: config.BENCH_RAMP_SECONDS,
        BENCH_CONCURRENCY: config.BENCH_CONCURRENCY,
        BENCH_STEPS_PER_RUN: config.BENCH_STEPS_PER_RUN,
        EXECUTOR_CONCURRENCY: config.EXECUTOR_CONCURRENCY,
        DB_POOL_SIZE: config.DB_POOL_SIZE,
        BENCH_DRAIN_JOBS: config.BENCH_DRAIN_JOBS,
        BENCH_SCALE_SMALL: config.BENCH_SCALE_SMALL,
        BENCH_SCALE_LARGE: config.BENCH_SCALE_LARGE,
        BENCH_UNWIND_RUNS: config.BENCH_UNWIND_RUNS,
        BENCH_UNWIND_CONCURRENCY: config.BENCH_UNWIND_CONCURRENCY,
      },
      unloaded: { calls: seq.latency.count, client: seq.latency, sagaLog: seqLog },
      sustained: {
        concurrency: config.BENCH_CONCURRENCY,
        windowSeconds: load.windowMs / 1000,
        callsPerSecond: load.perSecond,
        client: load.latency,
        sagaLog: loadLog,
        errors: load.errors,
        firstError: load.firstError ?? null,
        runsCreatedOnTheFly: loadLanes.runsCreatedOnTheFly,
        pg: sagaPg,
        cpu: sagaCpu,
        roleMemory,
        walByRelation,
      },
      baseline: {
        windowSeconds: base.windowMs / 1000,
        jobsPerSecond: base.perSecond,
        latency: base.latency,
        errors: base.errors,
        firstError: base.firstError ?? null,
        pg: basePg,
        cpu: baseCpu,
      },
      peers,
      sideBySide: table,
      sweepCost,
      unwind,
      ratios: {
        throughput: load.perSecond / base.perSecond,
        p50: load.latency.p50 / base.latency.p50,
        p99: load.latency.p99 / base.latency.p99,
        writeXacts: sagaPg.writeXactsNet / basePg.writeXactsNet,
        walBytes: sagaPg.walBytesNet / basePg.walBytesNet,
      },
      targets: [
        target(
          'unloaded intent commit → CONFIRMED p50',
          '≤ 5 ms',
          unloadedLog.p50,
          'ms',
          unloadedLog.p50 <= 5,
        ),
        target(
          'unloaded intent commit → CONFIRMED p99',
          '≤ 25 ms',
          unloadedLog.p99,
          'ms',
          unloadedLog.p99 <= 25,
        ),
        target(
          `durable calls/s, ${config.BENCH_CONCURRENCY} in flight`,
          '≥ 1,500',
          load.perSecond,
          'calls/s',
          load.perSecond >= 1500,
        ),
        target('write transactions per call', '≤ 2', sagaPg.writeXactsNet, '', sagaPg.writeXactsNet <= 2),
        target('commits per call (xact_commit)', '≤ 2', sagaPg.commits, '', sagaPg.commits <= 2),
        // issue 10's targets
        target(
          'calls/s ÷ DBOS one-step workflows/s (in process)',
          '≥ 4',
          load.perSecond / (dbos?.workPerSecond ?? NaN),
          '×',
          load.perSecond / (dbos?.workPerSecond ?? NaN) >= 4,
        ),
        target(
          'calls/s ÷ bare BullMQ + INSERT jobs/s',
          '≥ 1.0',
          load.perSecond / base.perSecond,
          '×',
          load.perSecond / base.perSecond >= 1,
        ),
        target(
          'write transactions per call (net)',
          '≤ 1.2',
          sagaPg.writeXactsNet,
          '',
          sagaPg.writeXactsNet <= 1.2,
        ),
        target('WAL flushes per call', '≤ 0.6', sagaPg.walSyncs, '', sagaPg.walSyncs <= 0.6),
        target('WAL bytes per call (net)', '≤ 1,024', sagaPg.walBytesNet, 'B', sagaPg.walBytesNet <= 1024),
        // Counted in the WAL itself when pg_walinspect can read it; else pg_stat_wal's count, which misses up
        // to a second of each backend's records at each end of the window (pg-counters.ts).
        target(
          walByRelation ? 'WAL records per call (pg_walinspect)' : 'WAL records per call (pg_stat_wal)',
          '≤ 10',
          walRecordsPerCall,
          '',
          walRecordsPerCall <= 10,
        ),
        target(
          'CPU per call, every process (Postgres, Redis incl.)',
          '≤ 2',
          sagaCpuPerCall,
          'ms',
          sagaCpuPerCall <= 2,
        ),
        target(
          'peak RSS of the largest role (api, relay, executor)',
          '≤ 150 MB',
          maxPeakMiB,
          'MiB',
          maxPeakMiB <= 150,
        ),
        target('unloaded intent → CONFIRMED p50', '≤ 3 ms', unloadedLog.p50, 'ms', unloadedLog.p50 <= 3),
        target('unloaded client call p50', '≤ 8 ms', seq.latency.p50, 'ms', seq.latency.p50 <= 8),
        target(
          `periodic queries, worst |${sweepCost.largeRows}/${sweepCost.smallRows} − 1|`,
          '≤ 0.2',
          worstSweep,
          '',
          worstSweep <= 0.2,
        ),
        target(
          'one-step runs unwound / s',
          '≥ 1,000',
          unwind.runsPerSecond,
          'runs/s',
          unwind.runsPerSecond >= 1000,
        ),
      ],
      shutdown: [
        ...shutdown.map((s) => ({ role: s.role, code: s.code, killed: s.killed })),
        { role: 'baseline-worker', code: baseClose.code, killed: baseClose.killed },
        { role: 'compensator', code: unwind.shutdown.code, killed: unwind.shutdown.killed },
      ],
    };
  } finally {
    // Each step of the cleanup runs even if an earlier one fails; the schema goes last, after every
    // process that used it has stopped.
    await roles?.stop().catch(warn('stopping the roles'));
    await baseline?.close().catch(warn('stopping the baseline'));
    if (redisHandle) {
      await deleteKeysWithPrefix(redisHandle, bench.queuePrefix).catch(warn('deleting the Redis keys'));
      await redisHandle.close().catch(warn('closing Redis'));
    }
    await bench.drop();
  }
}

const warn = (what: string) => (err: unknown) => console.error(`cleanup: ${what} failed:`, err);

function target(figure: string, goal: string, measured: number, unit: string, met: boolean) {
  return { figure, target: goal, measured, unit, met };
}

try {
  const config = loadBenchConfig();
  selectedPeerNames(config.BENCH_PEERS);
  const result = await main(config);
  console.log(formatReport(result));
  await writeResultJson(config.BENCH_RESULTS, result);
  console.log(`\nwritten to ${config.BENCH_RESULTS}`);
  // Undici keeps idle keep-alive sockets to the stopped API for a few seconds; do not wait for them.
  process.exit(0);
} catch (err) {
  console.error(err);
  process.exit(1);
}
