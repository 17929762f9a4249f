/**
 * A reship held by the shipping sandbox, sent again under its key and then unwound before any executor took
 * the second send: the lost reship `pnpm simulate` saw (docs/simulation.md, "Two api replicas behind a
 * balancer"), through the whole product: the sandbox, the real connectors, and the api, relay, executor,
 * reconciler and compensator as real processes.
 *
 * The warehouse dedupes by key (`dedupesByKey`), so once its lookup lag has passed the reconciler sends a
 * step whose first send it cannot find again under its key, long before the commit horizon. Here that
 * second send waits in the queue (the executor that made the first is gone) when the run is unwound, while
 * the first is still held at the warehouse and commits later. Withdrawn as NOT_EXECUTED ("nothing sent
 * since its last dispatch"), the step was skipped by the compensator and the run ended COMPENSATED before
 * the held shipment landed, which then stood. Withdrawn as UNKNOWN, the compensator looks it up by key until
 * it finds the shipment (or its horizon passes) and cancels it. The re-dispatch's job, delivered afterwards,
 * sends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bullmqConnection } from '@agent-saga/core';
import { createExecuteQueue } from '@agent-saga/dispatcher';
import { waitFor } from './fixtures/dispatcher-processes.js';
import { effectSteps, type FlowStep } from './fixtures/support-flow.js';
import { startSupportHarness, type SupportHarness } from './fixtures/support-harness.js';

/** Why 1 s: the tool's timeout, so the executor's lease (timeout plus LEASE_MARGIN_MS) lapses soon. */
const TIMEOUT_MS = 1_000;
/**
 * Why 8 s: how long the warehouse holds the first send before it commits, from its arrival: past the lease
 * (1.5 s), the reconciler's re-dispatch and the unwind, with seconds to spare on two busy cores, so the
 * shipment commits after the unwind has decided about the step.
 */
const HOLD_MS = 8_000;
/** Why 10 s: the horizon every tool declares here, above the hold plus the time from the claim to the send. */
const HORIZON_MS = 10_000;

const RESHIP = effectSteps('1183')[2] as FlowStep;
const RUN_ID = 'unwind-held-reship';

let h: SupportHarness;
let executeQueue: ReturnType<typeof createExecuteQueue>;
beforeAll(async () => {
  h = await startSupportHarness('unwind_held_reship', ['relay', 'executor', 'reconciler', 'compensator'], {
    env: { TEST_TOOL_TIMEOUT_MS: String(TIMEOUT_MS), TEST_COMMIT_HORIZON_MS: String(HORIZON_MS) },
  });
  executeQueue = createExecuteQueue(bullmqConnection(h.env.redisUrl), h.env.queuePrefix);
}, 90_000);
afterAll(async () => {
  await executeQueue?.close();
  await h?.close();
});

const stepOf = async () => (await h.saga.getRun(RUN_ID)).steps[0]!;

async function transitionsOf() {
  return h.env.db
    .selectFrom('step_events')
    .select(['from_status', 'to_status', 'cause'])
    .where('run_id', '=', RUN_ID)
    .where('step_idx', '=', 0)
    .where('kind', '=', 'transition')
    .orderBy('id')
    .execute();
}

describe('an unwind of a reship re-dispatched while its first send is held at the warehouse', () => {
  it(
    'looks the step up by key, finds the late shipment and cancels it; the queued re-send sends nothing',
    async () => {
      await h.saga.createRun({ runId: RUN_ID });
      const hold = h.sandbox.admin.addFault({
        vendor: 'shipping',
        method: 'POST',
        path: '/v1/shipments',
        kind: 'delay',
        delayMs: HOLD_MS,
        nth: 1,
      });
      const sent = await h.saga.call(RUN_ID, RESHIP.tool, RESHIP.args, { stepIdx: 0, waitMs: 0 });
      expect(sent.status).toBe('INTENDED');
      // The first send is at the warehouse, held; the executor that sent it dies with it.
      const held = () => h.sandbox.admin.faults().find((f) => f.id === hold.id)?.fired === 1;
      await waitFor('the held send', () => (held() ? true : undefined));
      const sentAt = Date.now();
      await h.procs.find((p) => p.role === 'executor')!.stop('SIGKILL');

      // Its lease lapses; nothing found by key past the lag (0 ms), so the reconciler sends it again under
      // the key. Nobody claims the re-send.
      await waitFor(
        'the re-dispatch',
        async () => {
          const events = await transitionsOf();
          return events.some((e) => e.from_status === 'NOT_EXECUTED' && e.to_status === 'INTENDED')
            ? true
            : undefined;
        },
        15_000,
        50,
      );
      expect(await stepOf()).toMatchObject({ status: 'INTENDED', attempts: 1 });
      expect(Date.now() - sentAt).toBeLessThan(HOLD_MS - 2_000); // the shipment has not committed yet
      expect(h.sandbox.admin.ledger().shipping.shipments).toEqual([]);

      expect(await h.saga.unwind(RUN_ID, 'the customer withdrew the request')).toMatchObject({
        status: 'COMPENSATING',
      });
      // The re-send's job reaches an executor now: the step is no longer INTENDED, nothing is sent.
      h.start('executor');
      const run = await h.terminal(RUN_ID, HOLD_MS + 30_000);
      // Past the hold: whatever the warehouse held has committed by now.
      await new Promise((r) => setTimeout(r, Math.max(0, sentAt + HOLD_MS + 1_000 - Date.now())));
      const key = run.steps[0]!.idempotencyKey;
      const shipments = h.sandbox.admin.ledger().shipping.shipments.filter((s) => s.idempotencyKey === key);
      expect(shipments.map((s) => s.status)).toEqual(['canceled']);
      expect(run.status).toBe('COMPENSATED');
      expect(run.steps[0]).toMatchObject({
        status: 'CONFIRMED',
        attempts: 1,
        externalRef: shipments[0]!.id,
        compensationStatus: 'compensated',
      });
      await waitFor('the queued re-send delivered', async () => {
        const c = await executeQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return Object.values(c).every((n) => n === 0) ? true : undefined;
      });
      const creates = h.sandbox.admin
        .requests()
        .filter((r) => r.method === 'POST' && r.path === '/v1/shipments' && r.idempotencyKey === key);
      expect(creates).toHaveLength(1);
      // How: the unwind withdrew the unclaimed re-send as UNKNOWN, not NOT_EXECUTED.
      const withdrawn = (await transitionsOf()).find((e) => e.cause.startsWith('withdrawn: run unwound'));
      expect(withdrawn).toMatchObject({ from_status: 'INTENDED', to_status: 'UNKNOWN' });
      expect(withdrawn?.cause).toMatch(/an earlier send under its key may still commit/);
    },
    HOLD_MS + 90_000,
  );
});
