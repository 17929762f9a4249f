/**
 * An unwind whose pass settles every compensation by its own compare-and-set is finished from the rows those
 * writes returned, without reading the run again (`settledByOwnWrites` in `drive-run.ts`): a one-step run
 * is read once and ends COMPENSATED with its effect undone once. A pass that did not (a refused attempt,
 * retried after its backoff) reads the log again before it finishes, and ends the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompensationStatus } from '@agent-saga/core';
import {
  call,
  executeStep,
  newRun,
  request,
  startApiHarness,
  type ApiHarness,
} from '../../dispatcher/test/api-harness.js';
import { effectsFor, FaultKind, injectFault } from '../../../test/fixtures/effect-tools.js';
import { driveRun, type UnwindDeps } from '../src/index.js';
import { inTestCompensator } from './in-test-compensator.js';

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness('comp_ownwrites');
});
afterAll(async () => h?.close());

/** An in-test compensator whose run reads are counted. */
function counted(): { readonly d: UnwindDeps; readonly reads: () => number } {
  const base = inTestCompensator(h, {
    workerId: 'in-test-own',
    env: { COMPENSATOR_POLL_MS: '50', COMPENSATION_BACKOFF_MS: '50' },
  });
  let reads = 0;
  const d: UnwindDeps = {
    ...base,
    groups: {
      ...base.groups,
      read: {
        submit(runId) {
          reads++;
          return base.groups.read.submit(runId);
        },
      },
    },
  };
  return { d, reads: () => reads };
}

/** A run with one confirmed `create_note`, asked to unwind. */
async function unwinding(runId: string): Promise<void> {
  await newRun(h, runId);
  const r = await call(h, runId, { tool: 'create_note', args: { orderId: runId, text: 'n' }, stepIdx: 0 });
  expect(r.status).toBe(202);
  await executeStep(h, runId, 0, { to: 'CONFIRMED' });
  expect((await request(h, 'POST', `/v1/runs/${runId}/unwind`, { reason: 'own writes' })).status).toBe(202);
}

const runStatus = async (runId: string) =>
  (await h.env.db.selectFrom('runs').select('status').where('run_id', '=', runId).executeTakeFirstOrThrow())
    .status;

/** The compensations' effects (`delete_note`) of the run's step 0, by the compensation's key. */
async function undone(runId: string): Promise<number> {
  const comp = await h.env.db
    .selectFrom('compensations')
    .select(['idempotency_key', 'status'])
    .where('run_id', '=', runId)
    .executeTakeFirstOrThrow();
  expect(comp.status).toBe(CompensationStatus.COMPENSATED);
  expect(comp.idempotency_key).not.toBeNull();
  return (await effectsFor(h.raw, comp.idempotency_key ?? '')).length;
}

describe('an unwind finished from its own writes', () => {
  it('a one-step run is read once, ends COMPENSATED, its effect undone once', async () => {
    const runId = 'own-one';
    await unwinding(runId);
    const { d, reads } = counted();
    expect(await driveRun(d, runId, 30_000)).toBe('finished');
    expect(await runStatus(runId)).toBe('COMPENSATED');
    expect(await undone(runId)).toBe(1);
    expect(reads()).toBe(1);
  });

  it('a refused attempt is not: the log is read again, and the retry ends the run the same way', async () => {
    const runId = 'own-refused';
    await unwinding(runId);
    await injectFault(h.raw, 'delete_note', FaultKind.REJECT);
    const { d, reads } = counted();
    expect(await driveRun(d, runId, 30_000)).toBe('finished');
    expect(await runStatus(runId)).toBe('COMPENSATED');
    expect(await undone(runId)).toBe(1);
    expect(reads()).toBeGreaterThanOrEqual(2);
  });
});
