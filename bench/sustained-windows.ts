/**
 * The bench's sustained phase alone, in several short windows, for comparing two builds of the hot path:
 * it starts the dispatcher's roles as `pnpm bench` does (compiled, `ROLE_NODE_FLAGS`, the bench's no-op
 * tool), warms them up, then runs `SUSTAINED_WINDOWS` closed-loop windows of `SUSTAINED_SECONDS` each and
 * prints one line per window: calls/s, the CPU per call of the api, of Postgres and of this process (the
 * client), the machine's busy share, the latency, and the api's main thread per call: its time on a core
 * and its time runnable but waiting for one (`/proc/<pid>/task/<pid>/schedstat`; the rest of the api's
 * CPU is V8's own threads, mostly the garbage collector's). No peers, no baseline, no scale phases: about
 * half a minute a run, so two checkouts can be measured in turn (A B A B …) within minutes of each other,
 * which is what a change of a few percent needs on a machine that drifts (docs/benchmarks.md).
 *
 *   pnpm build && BENCH_EXECUTE_INLINE=true tsx bench/sustained-windows.ts
 *
 * Environment (besides what `pnpm bench` reads): `SUSTAINED_WINDOWS` (3), `SUSTAINED_SECONDS` (5). The
 * schema it works in is dropped at the end.
 */
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { createSagaClient } from '@agent-saga/client';
import { parseConfig } from '@agent-saga/core';
import { loadBenchConfig } from './bench-config.js';
import { createBenchSchema, createRuns } from './bench-schema.js';
import { runClosedLoop } from './closed-loop-load.js';
import { cpuUsage, readCpu } from './cpu-usage.js';
import { startDispatcherRoles } from './dispatcher-roles.js';
import { createSagaLanes } from './saga-call-lanes.js';

const config = loadBenchConfig([]);
const options = parseConfig(
  z.object({
    SUSTAINED_WINDOWS: z.coerce.number().int().positive().default(3),
    SUSTAINED_SECONDS: z.coerce.number().positive().default(5),
  }),
  process.env,
);
/** Enough pre-created runs for the windows at up to 4,000 calls/s. */
const RUNS =
  config.BENCH_CONCURRENCY +
  Math.ceil(
    ((options.SUSTAINED_WINDOWS + 1) * (options.SUSTAINED_SECONDS + 1) * 4_000) / config.BENCH_STEPS_PER_RUN,
  );

/** A thread's nanoseconds on a core and waiting for one (Linux's schedstat; zeros elsewhere). */
async function threadSched(pid: number | undefined): Promise<{ onCpu: number; waiting: number }> {
  const f = await readFile(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').catch(() => '0 0');
  const [onCpu = 0, waiting = 0] = f.split(' ').map(Number);
  return { onCpu, waiting };
}

const bench = await createBenchSchema(config);
const roles = await startDispatcherRoles(config, bench);
try {
  const lanes = createSagaLanes({
    client: createSagaClient({ baseUrl: roles.baseUrl, token: bench.token }),
    runIds: await createRuns(bench.db, 'l', RUNS),
    stepsPerRun: config.BENCH_STEPS_PER_RUN,
    waitMs: config.BENCH_WAIT_MS,
  });
  const pids = {
    pids: { client: process.pid, ...Object.fromEntries(roles.children.map((c) => [c.name, c.child.pid])) },
  };
  const apiPid = roles.children.find((c) => c.name === 'api')?.child.pid;
  const load = (durationMs: number, atWindowStart?: () => Promise<void>) =>
    runClosedLoop({
      concurrency: config.BENCH_CONCURRENCY,
      rampMs: 300,
      durationMs,
      op: (lane) => lanes.call(lane),
      atWindowStart,
    });
  await load(2_500); // warm-up: JIT, pools, prepared statements
  for (let w = 0; w < options.SUSTAINED_WINDOWS; w++) {
    let before: Awaited<ReturnType<typeof readCpu>> | undefined;
    let mainBefore = { onCpu: 0, waiting: 0 };
    const r = await load(options.SUSTAINED_SECONDS * 1000, async () => {
      before = await readCpu(pids);
      mainBefore = await threadSched(apiPid);
    });
    const mainAfter = await threadSched(apiPid);
    const usage = cpuUsage(before!, await readCpu(pids), availableParallelism());
    const calls = (r.perSecond * r.windowMs) / 1000;
    const us = (group: string) => (((usage.cpuSeconds[group] ?? 0) / calls) * 1e6).toFixed(0);
    console.log(
      `${r.perSecond.toFixed(0)} calls/s  api ${us('api')} µs  postgres ${us('postgres')} µs  ` +
        `client ${us('client')} µs  machine ${(usage.machineBusyShare * 100).toFixed(0)} % busy  ` +
        `p50 ${r.latency.p50.toFixed(1)} ms  p99 ${r.latency.p99.toFixed(1)} ms  errors ${r.errors}  ` +
        `api main thread ${((mainAfter.onCpu - mainBefore.onCpu) / calls / 1000).toFixed(0)} µs, ` +
        `waiting ${((mainAfter.waiting - mainBefore.waiting) / calls / 1000).toFixed(0)} µs`,
    );
  }
} finally {
  await roles.stop();
  await bench.drop();
}
