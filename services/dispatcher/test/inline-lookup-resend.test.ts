/**
 * The API's inline lookup (`resolveByLookup`, what a retry call of an UNKNOWN step runs) for a tool whose
 * vendor dedupes by key: a "not found" past the tool's lookup lag, long before its commit horizon, sends
 * the step again under the same key in the same transaction, so the agent's retry is not left waiting out
 * the horizon; the same tool not deduping leaves the step UNKNOWN.
 *
 * The step is written through the API and played to UNKNOWN by the harness's `executeStep`; the lookup is
 * then called in this process with a `create_note` variant, because the harness's registry holds no tool
 * that dedupes by key (a retry call through the API would need one added to `api-harness.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLogger,
  defineTool,
  ref,
  stepKey,
  StepStatus,
  type AnyTool,
  type StepRow,
} from '@agent-saga/core';
import { z } from 'zod';
import { resolveByLookup } from '../src/api/inline-lookup.js';
import { call, executeStep, newRun, startApiHarness, stepAt, type ApiHarness } from './api-harness.js';

/** Why 200 ms: the search lag, far below ATTEMPTED_AGO_MS, so the resend wait has passed. */
const LAG_MS = 200;
/** Why 60 s: the commit horizon, far above ATTEMPTED_AGO_MS, so absence cannot be proved here. */
const HORIZON_MS = 60_000;
/** Why 5 s: past the lag, within the horizon: only the dedupes-by-key rule can send the step again. */
const ATTEMPTED_AGO_MS = 5_000;

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness('inline_resend');
});
afterAll(async () => h?.close());

const log = createLogger({ level: 'silent', name: 'inline-lookup-resend-test' });

/** `create_note` with a horizon and a lag, looking up the fixture's own effects table. */
function noteTool(dedupesByKey: boolean): AnyTool {
  const fixture = h.tools.find((t) => t.name === 'create_note')!;
  return defineTool({
    name: 'create_note',
    class: 'compensatable',
    version: 1,
    args: z.object({ orderId: z.string().min(1), text: z.string() }),
    compensate: (_args, key) => ({ tool: 'delete_note', args: { note: ref(key), reason: 'rolled back' } }),
    execute: fixture.execute,
    lookup: fixture.lookup!,
    lookupLagMs: LAG_MS,
    commitHorizonMs: HORIZON_MS,
    timeoutMs: 1_000,
    dedupesByKey,
  }) as AnyTool;
}

/** A `create_note` step whose attempt made no effect and ended UNKNOWN, sent `ATTEMPTED_AGO_MS` ago. */
async function unknownNote(runId: string): Promise<StepRow> {
  await newRun(h, runId);
  await call(h, runId, { tool: 'create_note', args: { orderId: runId, text: 'x' } });
  await executeStep(h, runId, 0, { to: 'UNKNOWN', effect: false, attemptAgoMs: ATTEMPTED_AGO_MS });
  return (await stepAt(h, runId, 0))!;
}

const lookUp = (step: StepRow, tool: AnyTool) =>
  resolveByLookup({
    db: h.env.db,
    schema: h.env.schema,
    tenantId: step.tenant_id,
    tool,
    step,
    recheckMs: 10,
    redispatchBudget: { maxRedispatches: 3 },
    log,
  });

const outboxOf = (runId: string) =>
  h.env.db.selectFrom('outbox').select(['job_id']).where('run_id', '=', runId).orderBy('id').execute();

describe('inline lookup of an UNKNOWN step, past the lag and within the horizon', () => {
  it('re-dispatches it under the same key when the vendor dedupes by key', async () => {
    const step = await unknownNote('inline-resend');
    const key = stepKey('inline-resend', 0, 'create_note');
    const r = await lookUp(step, noteTool(true));
    expect(r.replayed).toBe(false);
    expect(r.step).toMatchObject({ status: StepStatus.INTENDED, idempotency_key: key });
    expect(r.dispatch).toMatchObject({ jobId: `${key}-d2`, data: { key, dispatchNo: 2 } });
    expect((await outboxOf('inline-resend')).map((o) => o.job_id)).toEqual([key, `${key}-d2`]);

    const events = await h.env.db
      .selectFrom('step_events')
      .selectAll()
      .where('run_id', '=', 'inline-resend')
      .orderBy('id')
      .execute();
    const notExecuted = events.find((e) => e.to_status === StepStatus.NOT_EXECUTED);
    expect(notExecuted?.cause).toMatch(/dedupes by key/);
    // Nothing was proved absent: the lookup is on record as not believed, resendable.
    expect(events.filter((e) => e.kind === 'lookup').map((e) => e.detail)).toMatchObject([
      { found: false, believed: false, resendable: true },
    ]);
  });

  it('leaves it UNKNOWN, nothing sent, when the vendor does not dedupe by key', async () => {
    const step = await unknownNote('inline-no-dedupe');
    const r = await lookUp(step, noteTool(false));
    expect(r.dispatch).toBeNull();
    expect(r.step.status).toBe(StepStatus.UNKNOWN);
    expect(await outboxOf('inline-no-dedupe')).toHaveLength(1);
  });
});
