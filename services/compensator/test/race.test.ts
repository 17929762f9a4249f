/**
 * Several compensators on the same runs at once: two real child processes (each with a metrics endpoint)
 * and, to make sure two of them drive one run at the same moment rather than taking turns by job id, a
 * third driver in this process on every run. Nothing may be undone twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { compensationKey } from '@agent-saga/core';
import {
  call,
  executeStep,
  newRun,
  request,
  startApiHarness,
  type ApiHarness,
} from '../../dispatcher/test/api-harness.js';
import { effectsFor, injectFault } from '../../../test/fixtures/effect-tools.js';
import {
  killAll,
  startRole,
  waitFor,
  type RoleProcess,
} from '../../../test/fixtures/dispatcher-processes.js';
import { freePort } from '@agent-saga/core';
import { driveRun, type UnwindDeps } from '../src/index.js';
import { inTestCompensator } from './in-test-compensator.js';

let h: ApiHarness;
const procs: RoleProcess[] = [];
const ports: number[] = [];
/**
 * Short timings, as in unwind.test.ts, except the tool timeout: the fixture tool is one insert, but on a
 * loaded 2-core machine it can take over a second, and a timed-out attempt (UNKNOWN, then looked up or
 * sent again) is not the race this file is about. The counts below assume every attempt gets its answer.
 */
const ROLE_ENV = {
  FIXTURE_TOOL_TIMEOUT_MS: '5000',
  COMPENSATOR_SWEEP_MS: '200',
  COMPENSATOR_POLL_MS: '50',
  COMPENSATION_BACKOFF_MS: '50',
  COMPENSATOR_LEASE_MARGIN_MS: '2000',
  LOOKUP_RECHECK_MS: '20',
  COMPENSATOR_UNKNOWN_MIN_WAIT_MS: '2000',
};

beforeAll(async () => {
  h = await startApiHarness('race');
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    ports.push(port);
    procs.push(startRole(h.env, 'compensator', { ...ROLE_ENV, METRICS_PORT: String(port) }));
  }
  // Both processes listen before any unwind is asked for.
  await Promise.all(
    ports.map((p) => waitFor(`metrics on ${p}`, () => scrape(p).catch(() => undefined), 20_000, 100)),
  );
});
afterAll(async () => {
  await killAll(procs);
  await h?.close();
});

async function confirmedRun(runId: string, n: number): Promise<void> {
  await newRun(h, runId);
  for (let i = 0; i < n; i++) {
    const r = await call(h, runId, {
      tool: 'create_note',
      args: { orderId: `${runId}-${i}`, text: `note ${i}` },
      stepIdx: i,
    });
    expect(r.status).toBe(202);
    await executeStep(h, runId, i, { to: 'CONFIRMED' });
  }
}
const unwind = (runId: string) => request(h, 'POST', `/v1/runs/${runId}/unwind`, { reason: 'race' });
const terminal = (runId: string) =>
  waitFor(
    `run ${runId} terminal`,
    async () => {
      const run = (await request(h, 'GET', `/v1/runs/${runId}`)).body;
      return run.status !== 'COMPENSATING' ? run : undefined;
    },
    45_000,
    100,
  );

async function scrape(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (res.status !== 200) throw new Error(`metrics answered ${res.status}`);
  return res.text();
}
/** The sum of the samples of `name` whose labels include every `labels` pair, over every process. */
async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  let sum = 0;
  for (const port of ports)
    for (const line of (await scrape(port)).split('\n')) {
      const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
      if (!m || m[1] !== name) continue;
      if (Object.entries(labels).every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`))) sum += Number(m[3]);
    }
  return sum;
}

/** An in-test compensator (same code as the processes) named `workerId`. */
const inTestDriver = (workerId: string): UnwindDeps => inTestCompensator(h, { workerId, env: ROLE_ENV });

/**
 * Unwinds `ids` with the two processes plus two in-test drivers started on every run at the same instant
 * (so at least two drivers work one run at once), and waits until every run is terminal.
 */
async function raceUnwind(ids: readonly string[]) {
  const drivers = [inTestDriver('in-test-a'), inTestDriver('in-test-b')];
  const started = Date.now();
  await Promise.all(ids.map(async (id) => expect((await unwind(id)).status).toBe(202)));
  const driven = Promise.all(ids.flatMap((id) => drivers.map((d) => driveRun(d, id, 40_000))));
  const runs = await Promise.all(ids.map(terminal));
  await driven;
  return { runs, elapsedMs: Date.now() - started };
}

describe('compensators racing', () => {
  it('two processes and two in-test drivers unwind 10 runs at once: each compensation runs once', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `race-${i}`);
    for (const id of ids) await confirmedRun(id, 3);
    const { runs, elapsedMs } = await raceUnwind(ids);

    expect(runs.map((r) => r.status)).toEqual(ids.map(() => 'COMPENSATED'));
    for (const id of ids)
      for (let i = 0; i < 3; i++)
        expect(await effectsFor(h.raw, compensationKey(id, i, 'create_note'))).toEqual([
          expect.objectContaining({ tool: 'delete_note' }),
        ]);
    const comps = await h.env.db
      .selectFrom('compensations')
      .select(['run_id', 'step_idx', 'attempts', 'status'])
      .where('run_id', 'in', ids)
      .execute();
    expect(comps).toHaveLength(30);
    expect(comps.every((c) => c.attempts === 1 && c.status === 'compensated')).toBe(true);
    // One transition into `compensated` (and one attempt, one plan) per step, whoever made it.
    const per = await sql<{ run_id: string; step_idx: number; into: string; n: string }>`
      SELECT run_id, step_idx, to_status AS into, count(*) AS n FROM step_events
       WHERE kind = 'compensation' AND run_id = ANY(${ids}) AND to_status IN ('compensated', 'running', 'pending')
       GROUP BY 1, 2, 3`.execute(h.env.db);
    expect(per.rows).toHaveLength(90);
    expect(per.rows.filter((r) => r.n !== '1')).toEqual([]);
    // Who did the work: the attempts' workers (the processes and the in-test driver).
    const workers = await sql<{ worker: string; n: string }>`
      SELECT detail->>'worker' AS worker, count(*) AS n FROM step_events
       WHERE kind = 'compensation' AND to_status = 'running' AND run_id = ANY(${ids}) GROUP BY 1`.execute(
      h.env.db,
    );
    const finished = await metric('saga_compensator_runs_finished_total', { status: 'COMPENSATED' });
    console.log(
      `race: 10 runs × 3 steps in ${elapsedMs} ms; attempts by worker ${JSON.stringify(workers.rows)}; ` +
        `runs finished by the processes ${finished}`,
    );
    expect(workers.rows.length).toBeGreaterThanOrEqual(2);
  });

  it('racing retries: refused attempts come back once each, never as a second send', async () => {
    const ids = Array.from({ length: 5 }, (_, i) => `race-retry-${i}`);
    for (const id of ids) await confirmedRun(id, 2);
    // Six refusals spread over the runs: failed → running → failed again while other drivers hold the
    // row they read before (the ABA that a compare-and-set on the status alone lets through).
    await injectFault(h.raw, 'delete_note', 'error_before', 6);
    const { runs } = await raceUnwind(ids);
    expect(runs.map((r) => r.status)).toEqual(ids.map(() => 'COMPENSATED'));
    for (const id of ids)
      for (let i = 0; i < 2; i++)
        expect(await effectsFor(h.raw, compensationKey(id, i, 'create_note'))).toHaveLength(1);
    const into = await sql<{ n: string }>`
      SELECT count(*) AS n FROM step_events
       WHERE kind = 'compensation' AND run_id = ANY(${ids}) AND to_status = 'compensated'`.execute(h.env.db);
    expect(into.rows[0]?.n).toBe('10');
    // Every send is one attempt: 10 that took effect plus the 6 refused.
    const sent = await sql<{ n: string }>`
      SELECT coalesce(sum(attempts), 0) AS n FROM compensations WHERE run_id = ANY(${ids})`.execute(h.env.db);
    expect(sent.rows[0]?.n).toBe('16');
  });

  it('metrics: after an unwind the endpoints show the run, its compensations and their latency', async () => {
    const before = {
      finished: await metric('saga_compensator_runs_finished_total', { status: 'COMPENSATED' }),
      compensated: await metric('saga_compensations_total', { outcome: 'compensated' }),
      latency: await metric('saga_compensation_duration_seconds_count', { tool: 'delete_note', ok: 'true' }),
    };
    await confirmedRun('metrics-1', 2);
    await unwind('metrics-1');
    expect((await terminal('metrics-1')).status).toBe('COMPENSATED');
    // The run was finished (and counted) by exactly one of the two processes.
    await waitFor('the finished run counted', async () =>
      (await metric('saga_compensator_runs_finished_total', { status: 'COMPENSATED' })) ===
      before.finished + 1
        ? true
        : undefined,
    );
    expect(await metric('saga_compensations_total', { outcome: 'compensated' })).toBe(before.compensated + 2);
    expect(
      await metric('saga_compensation_duration_seconds_count', { tool: 'delete_note', ok: 'true' }),
    ).toBe(before.latency + 2);
    const text = await scrape(ports[0]!);
    expect(text).toContain('saga_compensating_runs');
    expect(text).toContain('# TYPE saga_compensator_manual_interventions_total counter');
    expect(text).toContain('role="compensator"');
  });
});
