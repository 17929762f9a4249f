import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunCursor, stepKey, executeJobSchema } from '@agent-saga/core';
import { effectsFor } from '../../../test/fixtures/effect-tools.js';
import { bullmqConnection } from '@agent-saga/core';
import { EXECUTE_QUEUE } from '../src/queue/execute-queue.js';
import { call, countRows, executeStep, newRun, startApiHarness, type ApiHarness } from './api-harness.js';

/**
 * End to end through BullMQ with the fast path on: the API publishes the job right after its commit and a
 * minimal in-test worker (a stand-in for the executor) claims and runs the step.
 */
let h: ApiHarness;
let worker: Worker;
const jobIds: string[] = [];
beforeAll(async () => {
  h = await startApiHarness('api_fast', { SAGA_FAST_PATH: 'true' });
  worker = new Worker(
    EXECUTE_QUEUE,
    async (job) => {
      jobIds.push(job.id ?? '');
      const data = executeJobSchema.parse(job.data);
      await executeStep(h, data.runId, data.stepIdx, { to: 'CONFIRMED' });
    },
    { connection: bullmqConnection(h.env.redisUrl), prefix: h.env.queuePrefix, concurrency: 8 },
  );
  await worker.waitUntilReady();
});
afterAll(async () => {
  await worker?.close();
  await h?.close();
});

describe('fast path', () => {
  it('publishes the job at once (job id = key) and answers CONFIRMED within waitMs', async () => {
    await newRun(h, 'fast');
    const started = Date.now();
    const r = await call(h, 'fast', {
      tool: 'create_note',
      args: { orderId: 'o-1', text: 'x' },
      waitMs: 10_000,
    });
    const key = stepKey('fast', 0, 'create_note');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'CONFIRMED', stepIdx: 0, idempotencyKey: key, replayed: false });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(jobIds).toContain(key);
    expect(await effectsFor(h.raw, key)).toHaveLength(1);
    expect(await readRunCursor(h.env.db, 'fast')).toBe(1);
  });

  it('makes one step of concurrent identical calls, executed once', async () => {
    await newRun(h, 'burst');
    const body = { tool: 'create_note', args: { orderId: 'o-1', text: 'x' }, stepIdx: 0, waitMs: 10_000 };
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => call(h, 'burst', body)));
    for (const a of answers) expect(a.body).toMatchObject({ status: 'CONFIRMED', stepIdx: 0 });
    expect(answers.filter((a) => a.body.replayed === false)).toHaveLength(1);
    expect(await countRows(h, 'saga_log', 'burst')).toBe(1);
    expect(await effectsFor(h.raw, stepKey('burst', 0, 'create_note'))).toHaveLength(1);
  });

  it('runs parallel steps of one model turn under their own indices', async () => {
    await newRun(h, 'parallel');
    const answers = await Promise.all(
      [0, 1, 2].map((i) =>
        call(h, 'parallel', {
          tool: 'create_note',
          args: { orderId: `o-${i}`, text: 'x' },
          stepIdx: i,
          waitMs: 10_000,
        }),
      ),
    );
    expect(answers.map((a) => [a.body.status, a.body.stepIdx])).toEqual([
      ['CONFIRMED', 0],
      ['CONFIRMED', 1],
      ['CONFIRMED', 2],
    ]);
    expect(await readRunCursor(h.env.db, 'parallel')).toBe(3);
  });
});
