/**
 * The rule of the write forms (src/steps/README.md): the single (or slow) form and the batch form of each
 * hot write, run on equal inputs, write the same rows, the same events, the same outbox messages and the
 * same NOTIFYs; a batch writes nothing at all for an input its compare-and-set does not match. Each pair
 * runs here on two runs that differ only by their id (and so their keys), and what each wrote is compared
 * with the ids taken out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  claimStepBatch,
  claimStepSlow,
  createRun,
  listenChannel,
  lockRun,
  markOutcomeDelivered,
  markOutcomesDelivered,
  payloadHash,
  readRunCursor,
  recordIntent,
  recordNewIntents,
  recordOutcomeBatch,
  recordOutcomeSlow,
  stepKey,
  stepSettledChannel,
  STANDARD_EVENT_COLUMNS,
  StepStatus,
  type ChannelListener,
  type NewIntent,
  type OutcomeRecord,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';

let env: TestEnv;
let listener: ChannelListener;
/** Every NOTIFY on the step channel, in arrival order (payload: the step's key). */
const notified: string[] = [];
beforeAll(async () => {
  env = await createTestEnv('writeforms');
  listener = await listenChannel({
    db: { url: env.databaseUrl, schema: env.schema },
    channel: stepSettledChannel(env.schema),
    onNotify: (key) => notified.push(key ?? ''),
  });
});
afterAll(async () => {
  await listener?.stop();
  await env?.close();
});

const TENANT = 'acme';
const GRACE_MS = 2_000;
const WORKER = 'exec-1';
const DEFAULT_LEASE_MS = 7_000;
const LEASES = new Map([['create_ticket', 9_000]]);

/** Three steps unlike each other: a compensatable one, one with a correction, one that depends on step 0. */
const TOOLS = ['create_ticket', 'send_note', 'charge_card'] as const;
const keyOf = (runId: string, stepIdx: number) => stepKey(runId, stepIdx, TOOLS[stepIdx]!);

function intentOf(runId: string, stepIdx: number): NewIntent {
  const tool = TOOLS[stepIdx]!;
  const args = { orderId: 'o-1182', n: stepIdx };
  const key = keyOf(runId, stepIdx);
  return {
    runId,
    stepIdx,
    tenantId: TENANT,
    tool,
    toolClass: stepIdx === 1 ? 'irreversible' : 'compensatable',
    toolVersion: 1,
    idempotencyKey: key,
    args,
    payloadHash: payloadHash(tool, args),
    compensation:
      stepIdx === 1 ? null : { tool: 'undo', toolVersion: 1, args: { ref: 'x' }, key: `${key}:c` },
    correction: stepIdx === 1 ? { template: 'apology' } : null,
    audience: stepIdx === 1 ? ['customer'] : ['support_team', 'finance'],
    dependsOn: stepIdx === 2 ? [0] : null,
    // Three tools, so three operations: the duplicate check lets each through in both forms.
    operation: { tool, args, identity: { orderId: args.orderId } },
    // The same intake span in both forms (a new one would be random): stored, evented and dispatched alike.
    trace: { traceId: `${stepIdx + 1}`.repeat(32), spanId: `${stepIdx + 1}`.repeat(16), flags: 1 },
  };
}
const STEPS = [0, 1, 2];

type Form = 'single' | 'batch';

/** The intake of the run's three steps: `recordIntent` each in its transaction, or one `recordNewIntents`. */
async function intake(runId: string, form: Form): Promise<void> {
  await createRun(env.db, { runId, tenantId: TENANT, metadata: {} });
  if (form === 'batch') {
    const rows = await recordNewIntents(
      env.db,
      STEPS.map((i) => intentOf(runId, i)),
      GRACE_MS,
    );
    expect(rows.every((r) => r !== null)).toBe(true);
    return;
  }
  for (const i of STEPS)
    await env.db.transaction().execute((trx) =>
      recordIntent(trx, {
        ...intentOf(runId, i),
        status: StepStatus.INTENDED,
        schema: env.schema,
        notifyRelay: false,
        relayGraceMs: GRACE_MS,
      }),
    );
}

/** The executor's claim of every step: the slow form (one transaction each) or one grouped statement. */
async function claim(runId: string, form: 'slow' | 'batch'): Promise<void> {
  if (form === 'batch') {
    const rows = await claimStepBatch(
      env.db,
      STEPS.map((i) => ({ runId, stepIdx: i, key: keyOf(runId, i), jobId: keyOf(runId, i) })),
      { worker: WORKER, leaseMsByTool: LEASES, defaultLeaseMs: DEFAULT_LEASE_MS },
    );
    expect(rows).toHaveLength(STEPS.length);
    return;
  }
  for (const i of STEPS) {
    const r = await claimStepSlow(env.db, {
      runId,
      stepIdx: i,
      key: keyOf(runId, i),
      worker: WORKER,
      leaseMs: DEFAULT_LEASE_MS,
      leaseMsByTool: LEASES,
      jobId: keyOf(runId, i),
      schema: env.schema,
    });
    expect(r.kind).toBe('claimed');
  }
}

/** One outcome of each kind: CONFIRMED (step 0), FAILED (step 1), UNKNOWN (step 2). */
const outcomesOf = (runId: string): OutcomeRecord[] => [
  {
    runId,
    stepIdx: 0,
    durationMs: 12,
    outcome: { status: StepStatus.CONFIRMED, effect: { externalRef: 'SUP-4470', result: { id: 4470 } } },
  },
  {
    runId,
    stepIdx: 1,
    durationMs: 5,
    outcome: {
      status: StepStatus.FAILED,
      error: { code: 'CLIENT_ERROR', message: 'no such order', status: 404, vendorCode: 'order_missing' },
    },
  },
  {
    runId,
    stepIdx: 2,
    outcome: { status: StepStatus.UNKNOWN, error: { code: 'TOOL_TIMEOUT', message: 'no answer in 5 s' } },
  },
];

async function record(runId: string, form: 'slow' | 'batch'): Promise<void> {
  if (form === 'batch') {
    const rows = await recordOutcomeBatch(env.db, WORKER, outcomesOf(runId), env.schema);
    expect(rows).toHaveLength(STEPS.length);
    return;
  }
  for (const o of outcomesOf(runId)) {
    const r = await recordOutcomeSlow(env.db, { ...o, leaseOwner: WORKER, schema: env.schema });
    expect(r.kind).toBe('recorded');
  }
}

/**
 * The delivered marks of steps 0 and 1 (settled) and 2 (UNKNOWN: nothing to deliver): `markOutcomeDelivered`
 * in an intake's transaction, one after another, or one `markOutcomesDelivered`.
 */
async function deliver(runId: string, form: Form): Promise<void> {
  if (form === 'batch') {
    await markOutcomesDelivered(
      env.db,
      STEPS.map((stepIdx) => ({ tenantId: TENANT, runId, stepIdx })),
    );
    return;
  }
  for (const stepIdx of STEPS)
    await env.db.transaction().execute((trx) => markOutcomeDelivered(trx, runId, stepIdx));
}

/** The columns of a step's row that hold its standard events. */
const STORED: ReadonlySet<string> = new Set(Object.values(STANDARD_EVENT_COLUMNS).flat());

/**
 * What the log holds for a run, with the run's id and keys replaced by placeholders and every time by what a
 * reader checks of it: whether it is set, whether a row was updated after it was written, and the lengths
 * of the lease and of the relay's grace.
 */
async function written(runId: string): Promise<unknown> {
  const run = await sql<Record<string, unknown>>`
    SELECT status, status_reason, cursor_floor, pivot_idx, irreversible_before_pivot,
           updated_at > created_at AS touched
      FROM runs WHERE run_id = ${runId}`.execute(env.db);
  const cursor = await readRunCursor(env.db, runId);
  const steps = await sql<Record<string, unknown>>`
    SELECT *, updated_at > created_at AS touched,
           extract(epoch FROM lease_until - last_attempt_at)::float8 AS lease_secs
      FROM saga_log WHERE run_id = ${runId} ORDER BY step_idx`.execute(env.db);
  const events = await sql<Record<string, unknown>>`
    SELECT step_idx, kind, from_status, to_status, cause, detail, actor, encode(trace_id, 'hex') AS trace_id
      FROM step_events WHERE run_id = ${runId} ORDER BY step_idx NULLS FIRST, id`.execute(env.db);
  const outbox = await sql<Record<string, unknown>>`
    SELECT topic, step_idx, idempotency_key, job_id, payload, published_at IS NOT NULL AS published,
           round(extract(epoch FROM relay_after - created_at))::int AS grace_secs
      FROM outbox WHERE run_id = ${runId} ORDER BY step_idx, id`.execute(env.db);
  return anonymise(runId, {
    run: run.rows.map((r) => ({ ...r, cursor })),
    // The standard events stored in the row (migration 0022) are where a batch form keeps what a slow form writes as a row; `events` below
    // compares them as the journal shows them, through the view.
    steps: steps.rows.map(({ created_at: _c, updated_at: _u, ...s }) =>
      Object.fromEntries(Object.entries(s).filter(([k]) => !STORED.has(k))),
    ),
    events: events.rows,
    outbox: outbox.rows,
  });
}

/** Keys first (they are longer than, and never contain, the run id), then the run id. */
function anonymise(runId: string, value: unknown): unknown {
  // `this[k]`, not `v`: JSON.stringify has already turned a Date into its ISO string when the replacer sees it.
  let text = JSON.stringify(value, function (this: Record<string, unknown>, k: string, v: unknown) {
    return this[k] instanceof Date ? 'time' : v;
  });
  for (const i of STEPS) text = text.replaceAll(keyOf(runId, i), `KEY${i}`);
  return JSON.parse(text.replaceAll(runId, 'RUN')) as unknown;
}

/** The NOTIFYs the run's steps got since `from`, by step index (the payload is the key). */
async function notifiedSteps(runId: string, from: number): Promise<number[]> {
  await new Promise((r) => setTimeout(r, 300)); // a NOTIFY arrives after its commit, on another session
  return notified
    .slice(from)
    .map((key) => STEPS.find((i) => keyOf(runId, i) === key))
    .filter((i): i is number => i !== undefined)
    .sort();
}

describe('the single and the batch form of each hot write write the same rows and events', () => {
  it('intake: recordIntent and recordNewIntents', async () => {
    await intake('wf-intake-single', 'single');
    await intake('wf-intake-batch', 'batch');
    const single = await written('wf-intake-single');
    expect(single).toMatchObject({ outbox: [{ grace_secs: 2 }, { grace_secs: 2 }, { grace_secs: 2 }] });
    expect(await written('wf-intake-batch')).toEqual(single);
  });

  it('claim: claimStepSlow and claimStepBatch (the same lease per tool, attempt event and outbox mark)', async () => {
    for (const r of ['wf-claim-slow', 'wf-claim-batch']) await intake(r, 'single');
    await claim('wf-claim-slow', 'slow');
    await claim('wf-claim-batch', 'batch');
    const slow = await written('wf-claim-slow');
    expect(slow).toMatchObject({
      steps: [
        { attempts: 1, lease_owner: WORKER, lease_secs: 9 },
        { attempts: 1, lease_owner: WORKER, lease_secs: 7 },
        { attempts: 1, lease_owner: WORKER, lease_secs: 7 },
      ],
      outbox: [{ published: true }, { published: true }, { published: true }],
    });
    expect(await written('wf-claim-batch')).toEqual(slow);
  });

  it('outcome: recordOutcomeSlow and recordOutcomeBatch (with the NOTIFY of each settled step)', async () => {
    for (const r of ['wf-outcome-slow', 'wf-outcome-batch']) {
      await intake(r, 'single');
      await claim(r, 'batch');
    }
    let from = notified.length;
    await record('wf-outcome-slow', 'slow');
    const slowNotified = await notifiedSteps('wf-outcome-slow', from);
    from = notified.length;
    await record('wf-outcome-batch', 'batch');
    const batchNotified = await notifiedSteps('wf-outcome-batch', from);

    const slow = await written('wf-outcome-slow');
    expect(slow).toMatchObject({
      steps: [
        { status: 'CONFIRMED', external_ref: 'SUP-4470', result: { id: 4470 }, lease_owner: null },
        { status: 'FAILED', error: { code: 'CLIENT_ERROR', vendorCode: 'order_missing' }, lease_until: null },
        { status: 'UNKNOWN', error: { code: 'TOOL_TIMEOUT' }, touched: true },
      ],
    });
    expect(await written('wf-outcome-batch')).toEqual(slow);
    expect(slowNotified).toEqual([0, 1, 2]);
    expect(batchNotified).toEqual(slowNotified);
  });

  it('delivered: markOutcomeDelivered and markOutcomesDelivered (the marks and the cursor)', async () => {
    for (const r of ['wf-deliver-single', 'wf-deliver-batch']) {
      await intake(r, 'single');
      await claim(r, 'batch');
      await record(r, 'batch');
    }
    await deliver('wf-deliver-single', 'single');
    await deliver('wf-deliver-batch', 'batch');
    const single = await written('wf-deliver-single');
    expect(single).toMatchObject({
      run: [{ cursor: 2 }],
      steps: [{ outcome_delivered: true }, { outcome_delivered: true }, { outcome_delivered: false }],
    });
    expect(await written('wf-deliver-batch')).toEqual(single);
  });
});

describe('the fused forms of the inline executor write what the two writes they replace write', () => {
  it('intake with a claim: recordNewIntents with `claim` and recordNewIntents, then claimStepBatch (but the outbox message)', async () => {
    await intake('wf-claimed-two', 'batch');
    await claim('wf-claimed-two', 'batch');
    await createRun(env.db, { runId: 'wf-claimed-one', tenantId: TENANT, metadata: {} });
    const rows = await recordNewIntents(
      env.db,
      STEPS.map((i) => ({
        ...intentOf('wf-claimed-one', i),
        claim: {
          owner: WORKER,
          leaseMs: LEASES.get(TOOLS[i]!) ?? DEFAULT_LEASE_MS,
          cause: 'executor: claimed',
        },
      })),
      GRACE_MS,
    );
    expect(rows.map((r) => r?.lease_owner)).toEqual([WORKER, WORKER, WORKER]);
    const two = (await written('wf-claimed-two')) as Record<string, unknown>;
    expect(two).toMatchObject({
      steps: [
        { attempts: 1, lease_secs: 9 },
        { attempts: 1, lease_secs: 7 },
        { attempts: 1, lease_secs: 7 },
      ],
      outbox: [{ published: true }, { published: true }, { published: true }],
    });
    // The same rows and events; no outbox message, which the claim would only have marked published.
    expect(await written('wf-claimed-one')).toEqual({ ...two, outbox: [] });
  });

  it('outcome delivered: recordOutcomeBatch with `deliver` and recordOutcomeBatch, then markOutcomesDelivered', async () => {
    for (const r of ['wf-delivered-two', 'wf-delivered-one']) {
      await intake(r, 'single');
      await claim(r, 'batch');
    }
    await record('wf-delivered-two', 'batch');
    await deliver('wf-delivered-two', 'batch');
    const rows = await recordOutcomeBatch(
      env.db,
      WORKER,
      outcomesOf('wf-delivered-one').map((o) => ({ ...o, deliver: true })),
      env.schema,
    );
    // RETURNING has no order: read the marks by step.
    const byStep = [...rows].sort((a, b) => a.step_idx - b.step_idx);
    expect(byStep.map((r) => [r.step_idx, r.outcome_delivered])).toEqual([
      [0, true],
      [1, true],
      [2, false],
    ]);
    const two = await written('wf-delivered-two');
    expect(two).toMatchObject({
      run: [{ cursor: 2 }],
      steps: [{ outcome_delivered: true }, { outcome_delivered: true }, { outcome_delivered: false }],
    });
    expect(await written('wf-delivered-one')).toEqual(two);
  });

  it('outcome delivered: neither writes nor waits for the run, even while another transaction holds it', async () => {
    await intake('wf-delivered-held', 'single');
    await claim('wf-delivered-held', 'batch');
    const version = async () =>
      (
        await sql<{ v: string }>`SELECT xmin::text AS v FROM runs WHERE run_id = 'wf-delivered-held'`.execute(
          env.db,
        )
      ).rows[0]!.v;
    const before = await version();
    // A transaction holds the run's lock (as an intake does) until the outcome has been recorded.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    const holder = env.db.transaction().execute(async (trx) => {
      await lockRun(trx, TENANT, 'wf-delivered-held');
      locked();
      await held;
    });
    await lockTaken;
    const rows = await recordOutcomeBatch(
      env.db,
      WORKER,
      outcomesOf('wf-delivered-held').map((o) => ({ ...o, deliver: true })),
      env.schema,
    );
    release();
    await holder;
    expect(rows.map((r) => r.status)).toEqual(['CONFIRMED', 'FAILED', 'UNKNOWN']);
    // RETURNING has no order: read the marks by step.
    const byStep = [...rows].sort((a, b) => a.step_idx - b.step_idx);
    expect(byStep.map((r) => [r.step_idx, r.outcome_delivered])).toEqual([
      [0, true],
      [1, true],
      [2, false],
    ]);
    expect(await written('wf-delivered-held')).toMatchObject({ run: [{ cursor: 2, cursor_floor: 0 }] });
    expect(await version()).toBe(before);
  });
});

describe('a batch form writes nothing for an input its compare-and-set does not match', () => {
  it('intake, claim, outcome and delivered mark each leave such a step exactly as it was', async () => {
    // The intake: a run that is unwinding takes no new step.
    await createRun(env.db, { runId: 'wf-none-intake', tenantId: TENANT, metadata: {} });
    await sql`UPDATE runs SET status = 'COMPENSATING' WHERE run_id = 'wf-none-intake'`.execute(env.db);
    const intakeBefore = await written('wf-none-intake');
    expect(await recordNewIntents(env.db, [intentOf('wf-none-intake', 0)], GRACE_MS)).toEqual([null]);
    expect(await written('wf-none-intake')).toEqual(intakeBefore);

    // The claim: a step of an unwinding run (the slow form withdraws it; the batch leaves it to it).
    await intake('wf-none-claim', 'single');
    await sql`UPDATE runs SET status = 'COMPENSATING' WHERE run_id = 'wf-none-claim'`.execute(env.db);
    const claimBefore = await written('wf-none-claim');
    const claimed = await claimStepBatch(
      env.db,
      [
        {
          runId: 'wf-none-claim',
          stepIdx: 0,
          key: keyOf('wf-none-claim', 0),
          jobId: keyOf('wf-none-claim', 0),
        },
      ],
      { worker: WORKER, leaseMsByTool: LEASES, defaultLeaseMs: DEFAULT_LEASE_MS },
    );
    expect(claimed).toEqual([]);
    expect(await written('wf-none-claim')).toEqual(claimBefore);

    // The outcome: a step another worker's lease holds (the slow form keeps the outcome as an event).
    await intake('wf-none-outcome', 'single');
    await claim('wf-none-outcome', 'batch');
    const outcomeBefore = await written('wf-none-outcome');
    const from = notified.length;
    expect(await recordOutcomeBatch(env.db, 'exec-2', outcomesOf('wf-none-outcome'), env.schema)).toEqual([]);
    expect(await written('wf-none-outcome')).toEqual(outcomeBefore);
    expect(await notifiedSteps('wf-none-outcome', from)).toEqual([]);

    // The delivered mark: a step still INTENDED has no outcome to deliver, so the cursor stays.
    await intake('wf-none-deliver', 'single');
    const deliverBefore = await written('wf-none-deliver');
    await deliver('wf-none-deliver', 'batch');
    expect(await written('wf-none-deliver')).toEqual(deliverBefore);
  });
});
