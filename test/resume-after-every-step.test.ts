/**
 * Box (g) of issue 4's failure matrix: resume after every step, with no model and a fresh process. A
 * scripted support flow (get_order, then N = 3 side-effecting steps: create_ticket, charge_card, reship)
 * is played by a first agent in this process up to step k, for every k in 0..N; then a NEW child process
 * (`fixtures/resume-support-run.ts`: the client and the flow's script, no transcript, no model) is given
 * only the run id, reads the run from `GET /v1/runs/{id}` and finishes it. Two flows: order 1183, which the
 * warehouse reships (the run ends COMPLETED), and order 1182, which it refuses (the script unwinds: the run
 * ends COMPENSATED). Each row asserts the ledger (every effect exactly once, undone once when unwound) and
 * the log (statuses, one send per step, each step settled once, never declared not executed).
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { REPO_ROOT } from './fixtures/dispatcher-processes.js';
import {
  callUntilSettled,
  effectSteps,
  runLedger,
  supportFlow,
  type OrderId,
} from './fixtures/support-flow.js';
import { startSupportHarness, type SupportHarness } from './fixtures/support-harness.js';

const RESUMER = resolve(REPO_ROOT, 'test/fixtures/resume-support-run.ts');
const N = 3;
const reasonOf = (runId: string) => `resume ${runId}: the warehouse refused the reship`;

let h: SupportHarness;

beforeAll(async () => {
  h = await startSupportHarness('resume', ['relay', 'executor', 'compensator']);
}, 90_000);
afterAll(async () => h?.close());

/** The first agent: the run created, the order read, and the first `k` side-effecting steps played. */
async function playUntil(runId: string, orderId: OrderId, k: number): Promise<void> {
  await h.saga.createRun({ runId });
  const agent = h.saga.run(runId);
  const [getOrder, ...effects] = supportFlow(orderId);
  await agent.call(getOrder!.tool, getOrder!.args);
  for (const step of effects.slice(0, k))
    await callUntilSettled(() => agent.call(step.tool, step.args, { waitMs: 5_000 }));
}

interface ResumerReport {
  readonly runId: string;
  readonly status: string;
  readonly logAtStart: readonly { tool: string; status: string }[];
  readonly called: readonly { tool: string; status: string }[];
}

/** Runs the resumer as a new process and returns its report; fails with its output if it fails. */
function resumeInFreshProcess(runId: string, orderId: OrderId): Promise<ResumerReport> {
  const child = spawn(process.execPath, ['--import', 'tsx', RESUMER], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      SAGA_URL: h.baseUrl,
      SAGA_TOKEN: h.token,
      RUN_ID: runId,
      ORDER_ID: orderId,
      UNWIND_REASON: reasonOf(runId),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  return new Promise((res, rej) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').at(-1);
      if (code !== 0 || !last) rej(new Error(`resumer exited ${code}:\n${out}\n${err}`));
      else res(JSON.parse(last) as ResumerReport);
    });
  });
}

const ROWS = (['1183', '1182'] as const).flatMap((orderId) =>
  Array.from({ length: N + 1 }, (_, k) => ({ orderId, k, runId: `resume-${orderId}-after-${k}` })),
);

describe.concurrent('(g) resume after every step, with no model and a fresh process', () => {
  for (const { orderId, k, runId } of ROWS)
    it(`order ${orderId} (${orderId === '1182' ? 'reship refused: unwinds' : 'completes'}), resumed after step ${k} of ${N}`, async ({
      expect,
    }) => {
      await playUntil(runId, orderId, k);
      const report = await resumeInFreshProcess(runId, orderId);

      const tools = effectSteps(orderId).map((s) => s.tool);
      const refused = orderId === '1182';
      // What the fresh process found in the log, and what it did: the steps after k, and nothing before.
      expect(report.logAtStart.map((s) => s.tool)).toEqual(tools.slice(0, k));
      // (After the refused reship, k = N, the log alone tells it to unwind: it calls nothing.)
      expect(report.called.map((c) => c.tool)).toEqual(
        refused && k === N ? [] : ['get_order', ...tools.slice(k)],
      );

      const run = await h.saga.getRun(runId);
      expect(report.status).toBe(run.status);
      expect(run.status).toBe(refused ? 'COMPENSATED' : 'COMPLETED');
      expect(run.steps.map((s) => [s.tool, s.status, s.compensationStatus])).toEqual(
        refused
          ? [
              ['create_ticket', 'CONFIRMED', 'compensated'],
              ['charge_card', 'CONFIRMED', 'compensated'],
              ['reship', 'FAILED', 'skipped'],
            ]
          : tools.map((t) => [t, 'CONFIRMED', null]),
      );
      expect(run.steps.map((s) => s.attempts)).toEqual([1, 1, 1]);

      // The log: each step settled once, none ever declared not executed or sent twice.
      const events = await h.env.db
        .selectFrom('step_events')
        .select(['step_idx', 'kind', 'to_status'])
        .where('run_id', '=', runId)
        .execute();
      for (let i = 0; i < N; i++) {
        const mine = events.filter((e) => e.step_idx === i);
        expect(
          mine.filter((e) => e.kind === 'attempt'),
          `attempts of step ${i}`,
        ).toHaveLength(1);
        expect(
          mine.filter((e) => e.kind === 'transition' && ['CONFIRMED', 'FAILED'].includes(e.to_status ?? '')),
          `settlements of step ${i}`,
        ).toHaveLength(1);
        expect(mine.filter((e) => e.to_status === 'NOT_EXECUTED')).toEqual([]);
      }

      // The ledger: every effect exactly once; undone exactly once when the run unwound.
      const ledger = runLedger(h.sandbox.admin.ledger(), run);
      expect(ledger.tickets.map((t) => [t.status, t.comments.length])).toEqual([
        refused ? ['Done', 1] : ['To Do', 0],
      ]);
      if (refused) expect(ledger.tickets[0]!.comments[0]).toContain(reasonOf(runId));
      expect(ledger.charges.map((c) => c.refunds)).toEqual([refused ? 1 : 0]);
      expect(ledger.shipments.map((s) => s.status)).toEqual(refused ? [] : ['created']);
      expect(ledger.emails).toBe(0);
    });
});
