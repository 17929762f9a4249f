/**
 * The failure matrix of issue 4, one row per box, through the whole product: the vendor sandbox (Stripe,
 * Jira, shipping), the real connectors, and the api, relay, executors, reconciler and compensator as real
 * processes, one set shared by every row. Each row plays one failure on its own run and asserts both
 *
 * - the sandbox's ledger: the net effects the run's keys made (tickets and their comments, charges and
 *   their refunds, shipments, emails: none ever), and
 * - the saga log: the run's terminal status, each step's status and compensation status (as
 *   `GET /v1/runs/{id}` shows them), the attempts of steps and compensations, and the events that tell how
 *   it got there (`step_events`, with `times` where a count matters: 0 for an event that must not exist).
 *
 * Rows whose run must exist before the row plays are prepared in `beforeAll`: the crash rows first, while
 * the only executors are ones started to die at the crash point (one per crash row, started with the other
 * processes, so no row waits for a process to start), then the runs that need the support flow's first
 * steps confirmed, all at once. The recoveries of the crash rows run meanwhile. The matrix's last box,
 * resume after every step with no model and a fresh process, is `resume-after-every-step.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, ToolOutcomeUnknown, type RunView } from '@agent-saga/client';
import { sql } from 'kysely';
import { createApiToken, CrashPoint, executeJobSchema } from '@agent-saga/core';
import { bullmqConnection } from '@agent-saga/core';
import { createExecuteQueue } from '@agent-saga/dispatcher';
import { waitFor } from './fixtures/dispatcher-processes.js';
import {
  callUntilSettled,
  CHARGE_AMOUNT,
  effectSteps,
  runLedger,
  type FlowStep,
} from './fixtures/support-flow.js';
import { startSupportHarness, type SupportHarness } from './fixtures/support-harness.js';

let h: SupportHarness;
let executeQueue: ReturnType<typeof createExecuteQueue>;
/** This file's `PG_APPLICATION_NAME`: its compensators' lock sessions are told apart from other files'. */
const APP_NAME = `matrix${process.pid}`;

const [TICKET, CHARGE, RESHIP] = effectSteps('1183') as [FlowStep, FlowStep, FlowStep];
/** What the operator gives as the reason of every unwind; the closing comment of the ticket must carry it. */
const reasonOf = (runId: string) => `matrix ${runId}: the customer withdrew the request`;

// ---------------------------------------------------------------------------------------------------------
// The expectations a row declares.

type Ticket = { readonly status: string; readonly comments: number; readonly closedWithReason?: boolean };
interface LedgerExpectation {
  readonly tickets: readonly Ticket[];
  readonly charges: readonly { readonly refunds: number; readonly amount?: number }[];
  readonly shipments: readonly { readonly status: string }[];
}

/** An event of the run (`step_events`) that must be there: at least once, or exactly `times` times. */
interface EventExpectation {
  readonly stepIdx: number | null;
  readonly kind: string;
  readonly to?: string;
  readonly cause?: string | RegExp;
  /** Fields the event's detail must hold (a deep partial match); with several, any one of them. */
  readonly detail?: Record<string, unknown> | readonly Record<string, unknown>[];
  readonly times?: number;
}

/**
 * A lookup that saw the effect, as the reconciler (`seen`) or the api's inline lookup on a retry (`found`)
 * records it; and one that did not, and was not believed yet (the write may not be searchable yet).
 */
const SAW_IT = [{ seen: 'found' }, { found: true }] as const;
const NOT_YET = [{ seen: 'absent' }, { found: false, believed: false }] as const;

interface LogExpectation {
  readonly run: string;
  /** Per step: tool, status, compensation status (null for a run that never unwound). */
  readonly steps: readonly (readonly [string, string, string | null])[];
  /** Per step: how many times the forward call was sent (always 1 here: the point of the harness). */
  readonly attempts: readonly number[];
  /** Per step: how many times its compensation was sent; omitted for runs that never unwound. */
  readonly compensationAttempts?: readonly number[];
  readonly events: readonly EventExpectation[];
}

/** How a row's run exists before the row plays (in beforeAll). */
type Setup =
  | { readonly kind: 'none' }
  /** The run's only step, sent to an executor that is SIGKILLed after the tool returns, before it records. */
  | { readonly kind: 'crash'; readonly step: FlowStep }
  /** The support flow's first `steps` side-effecting steps (order 1183), CONFIRMED. */
  | { readonly kind: 'forward'; readonly steps: number };

interface Row {
  readonly box: string;
  readonly name: string;
  readonly runId: string;
  readonly setup: Setup;
  /** Plays the failure on the prepared run and drives the run to its end. */
  readonly play: (runId: string) => Promise<void>;
  readonly ledger: LedgerExpectation;
  readonly log: LogExpectation;
}

// ---------------------------------------------------------------------------------------------------------
// What rows do.

/** Asks for the unwind and waits for the terminal status. */
async function unwindToEnd(runId: string): Promise<void> {
  expect(await h.saga.unwind(runId, reasonOf(runId))).toMatchObject({ status: 'COMPENSATING' });
  await h.terminal(runId);
}

async function completeToEnd(runId: string): Promise<void> {
  expect(await h.saga.complete(runId)).toMatchObject({ status: 'COMPLETED' });
}

const stepOf = async (runId: string, stepIdx: number) => (await h.saga.getRun(runId)).steps[stepIdx]!;

/** Waits until the step is CONFIRMED (a recovery by the reconciler), failing on any other settled status. */
async function confirmedStep(runId: string, stepIdx: number) {
  return waitFor(
    `step ${stepIdx} of ${runId} CONFIRMED`,
    async () => {
      const s = await stepOf(runId, stepIdx);
      if (!['INTENDED', 'UNKNOWN', 'CONFIRMED'].includes(s.status))
        throw new Error(`step ${stepIdx} of ${runId} is ${s.status}`);
      return s.status === 'CONFIRMED' ? s : undefined;
    },
    20_000,
    100,
  );
}

/** What the crash of each crash row left, recorded in beforeAll. */
const crashes = new Map<
  string,
  { signal: string | null; output: string; effectsAtCrash: number; statusAtCrash: string }
>();

/** Plays a crash row: the reconciler settles the step by lookup; then the run unwinds. */
async function afterCrash(runId: string): Promise<void> {
  const crash = crashes.get(runId);
  expect(crash?.signal).toBe('SIGKILL');
  expect(crash?.output).toContain(`crash point reached: ${CrashPoint.AFTER_TOOL_BEFORE_RECORD}`);
  // The tool had returned: its effect existed when the executor died, and the log did not know it.
  expect(crash?.effectsAtCrash).toBe(1);
  expect(crash?.statusAtCrash).toBe('INTENDED');
  await confirmedStep(runId, 0);
  await unwindToEnd(runId);
}

/** Requests any vendor received since `since` (ISO time), other than reads. */
const writesSince = (since: string, path = '') =>
  h.sandbox.admin
    .requests()
    .filter((r) => r.at >= since && r.method !== 'GET' && r.path.includes(path))
    .map((r) => `${r.vendor} ${r.method} ${r.path}`);

/** A person acting on the ticket in Jira directly (transition 31 → Done, 21 → In Progress). */
async function personTransitions(ticket: string, transitionId: '21' | '31'): Promise<void> {
  const c = h.sandbox.credentials;
  const path = `/rest/api/3/issue/${ticket}/transitions`;
  const logged = () =>
    h.sandbox.admin.requests().filter((q) => q.method === 'POST' && q.path === path).length;
  const before = logged();
  const r = await fetch(`${h.sandbox.urls.jira}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${c.jiraEmail}:${c.jiraApiToken}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ transition: { id: transitionId } }),
  });
  expect(r.status).toBe(204);
  // The sandbox logs a request when its answer has gone out, which may be after this client has read it:
  // wait for the entry, so a later "writes since" does not count the person's own write.
  await waitFor("the person's transition in the request log", () => (logged() > before ? true : undefined));
}

/** A person refunding the PaymentIntent in full in Stripe's dashboard (a refund under no saga key). */
async function personRefunds(paymentIntent: string): Promise<void> {
  const before = h.sandbox.admin.ledger().stripe.refunds.length;
  const r = await fetch(`${h.sandbox.urls.stripe}/v1/refunds`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${h.sandbox.credentials.stripeSecretKey}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ payment_intent: paymentIntent }).toString(),
  });
  expect(r.status).toBe(200);
  expect(h.sandbox.admin.ledger().stripe.refunds.length).toBe(before + 1);
  const path = '/v1/refunds';
  await waitFor("the person's refund in the request log", () =>
    h.sandbox.admin.requests().some((q) => q.method === 'POST' && q.path === path) ? true : undefined,
  );
}

/**
 * Every execute message of the step delivered twice more, under other job ids (an at-least-once queue's
 * redelivery, which jobId dedup cannot stop), kept after completion so the row can read what each did.
 */
const redelivered: { readonly stepIdx: number; readonly jobId: string }[] = [];
async function redeliverExecuteJobs(runId: string, stepIdx: number): Promise<void> {
  const rows = await h.env.db
    .selectFrom('outbox')
    .select(['job_id', 'payload'])
    .where('run_id', '=', runId)
    .where('step_idx', '=', stepIdx)
    .execute();
  expect(rows).toHaveLength(1);
  for (const { job_id, payload } of rows)
    for (const n of [1, 2]) {
      const id = `${job_id}-again-${n}`;
      await executeQueue.add('execute', executeJobSchema.parse(payload), {
        jobId: id,
        removeOnComplete: false,
      });
      redelivered.push({ stepIdx, jobId: id });
    }
}

async function playRedelivery(runId: string): Promise<void> {
  await h.saga.createRun({ runId });
  for (const [i, step] of [TICKET, CHARGE, RESHIP].entries()) {
    // Sent, and at once delivered twice more (while the step is in flight, or just after it settled).
    await h.saga.call(runId, step.tool, step.args, { stepIdx: i, waitMs: 0 }).catch(() => undefined);
    await redeliverExecuteJobs(runId, i);
    const settled = await callUntilSettled(() =>
      h.saga.call(runId, step.tool, step.args, { stepIdx: i, waitMs: 2_000 }),
    );
    expect(settled.status).toBe('CONFIRMED');
  }
  // The relay publishes every outbox message of the run again (as after a crash before marking them).
  const before = new Date();
  await h.env.db.updateTable('outbox').set({ published_at: null }).where('run_id', '=', runId).execute();
  await waitFor('the relay to publish the run again', async () => {
    const rows = await h.env.db
      .selectFrom('outbox')
      .select('published_at')
      .where('run_id', '=', runId)
      .execute();
    return rows.every((r) => r.published_at !== null && r.published_at >= before) ? true : undefined;
  });
  // The unwind's claim lost while it runs: the compensators' lock sessions terminated (as by a failover),
  // so the other compensator may take the run while the first still drives it.
  expect(await h.saga.unwind(runId, reasonOf(runId))).toMatchObject({ status: 'COMPENSATING' });
  for (const n of [1, 2]) {
    const ended = await sql<{ n: number }>`SELECT count(pg_terminate_backend(pid))::int AS n
      FROM pg_stat_activity WHERE application_name = ${`${APP_NAME}-compensator-locks`}`.execute(h.env.db);
    if (n === 1) expect(ended.rows[0]?.n, "the compensators' lock sessions").toBe(2);
    await new Promise((r) => setTimeout(r, 1_200)); // past the sessions' reopening (1 s)
  }
  await h.terminal(runId);
  // Every redelivered execute message was delivered and found nothing to do, or ran in place of the
  // original (which then found nothing): at most one of a step's messages executed it.
  const outcomes = await waitFor(
    'every redelivered execute job to finish',
    async () => {
      const jobs = await Promise.all(redelivered.map((r) => executeQueue.getJob(r.jobId)));
      return jobs.every((j) => j?.finishedOn !== undefined)
        ? jobs.map((j) => String(j!.returnvalue))
        : undefined;
    },
    15_000,
    100,
  );
  for (const i of [0, 1, 2]) {
    const mine = outcomes.filter((_, n) => redelivered[n]!.stepIdx === i);
    expect(mine, `redelivered jobs of step ${i}`).toHaveLength(2);
    expect(
      mine.filter((o) => o !== 'duplicate'),
      `redelivered jobs of step ${i}`,
    ).toEqual(mine.includes('executed') ? ['executed'] : []);
  }
}

async function playMismatch(runId: string): Promise<void> {
  const since = new Date().toISOString();
  const reused: [number, FlowStep][] = [
    [0, { tool: TICKET.tool, args: { ...TICKET.args, orderId: '1184' } }],
    [1, { tool: CHARGE.tool, args: { ...CHARGE.args, amount: 2 * CHARGE_AMOUNT } }],
  ];
  for (const [stepIdx, step] of reused) {
    const refused = await h.saga.call(runId, step.tool, step.args, { stepIdx }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConflictError);
    expect(refused).toMatchObject({ status: 409, code: 'IDEMPOTENCY_MISMATCH' });
  }
  expect(h.sandbox.admin.requests().filter((r) => r.at >= since)).toEqual([]);
  await completeToEnd(runId);
}

/** The first send is answered 504 after the effect; the model retries at once, then until it knows. */
async function playLaggingLookup(runId: string, step: FlowStep, fault: object, reworded: FlowStep) {
  await h.saga.createRun({ runId });
  h.sandbox.admin.addFault({ ...fault, nth: 1, kind: 'error_after' });
  const first = await h.saga.call(runId, step.tool, step.args, { stepIdx: 0 }).catch((e: unknown) => e);
  expect(first).toBeInstanceOf(ToolOutcomeUnknown);
  const settled = await callUntilSettled(() =>
    h.saga.call(runId, reworded.tool, reworded.args, { stepIdx: 0, waitMs: 1_000 }),
  );
  expect(settled).toMatchObject({ status: 'CONFIRMED', replayed: true });
  await completeToEnd(runId);
}

/** Arms `fault` (built from the run as it stands), unwinds, and disarms it. */
async function unwindWithFault(runId: string, fault: (run: RunView) => object): Promise<void> {
  const armed = h.sandbox.admin.addFault(fault(await h.saga.getRun(runId)));
  try {
    await unwindToEnd(runId);
  } finally {
    h.sandbox.admin.removeFault(armed.id);
  }
}

/**
 * The run's authority lapses before its unwind sends anything (granted two minutes ago, for one minute:
 * `policy.authorityTtlMs`, and `runs.authority_at` as a run created then would hold it): the unwind sends
 * nothing, the refund included, and waits for a renewal, which shows the recovery plan and its hash. No
 * vendor hears a write before an operator approves it; then each compensation is sent once.
 */
async function playExpiredAuthority(runId: string): Promise<void> {
  await h.env.db
    .updateTable('runs')
    .set({
      policy: sql`policy || '{"authorityTtlMs": 60000}'::jsonb` as never,
      authority_at: sql<Date>`now() - interval '2 minutes'`,
    })
    .where('run_id', '=', runId)
    .execute();
  const since = new Date().toISOString();
  expect(await h.saga.unwind(runId, reasonOf(runId))).toMatchObject({ status: 'COMPENSATING' });
  const operator = await createApiToken(h.env.db, { tenantId: 'acme', role: 'operator', label: 'olga' });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${h.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  type Approval = { id: string; kind: string; hash: string; evidence: { recoveryPlan: { tool: string }[] } };
  const renewal = await waitFor('the renewal', async () => {
    const inbox = await api('GET', `/v1/approvals?status=pending&runId=${runId}`);
    return (inbox.body.approvals as Approval[]).find((a) => a.kind === 'renewal');
  });
  expect(renewal.evidence.recoveryPlan.map((a) => a.tool)).toEqual([
    'cancel_shipment',
    'refund',
    'close_ticket',
  ]);
  // The compensators pass over the run meanwhile and send nothing: no write reaches a vendor.
  await new Promise((r) => setTimeout(r, 1_000));
  expect(writesSince(since)).toEqual([]);
  expect((await h.saga.getRun(runId)).status).toBe('COMPENSATING');
  expect(
    (await api('POST', `/v1/approvals/${renewal.id}/decision`, { decision: 'approve', hash: renewal.hash }))
      .status,
  ).toBe(200);
  await h.terminal(runId);
}

const ticketOf = (run: RunView) => run.steps[0]!.externalRef!;
const shipmentOf = (run: RunView) => run.steps[2]!.externalRef!;

// ---------------------------------------------------------------------------------------------------------
// Expectations shared by rows.

const CLOSED_WITH_REASON: Ticket = { status: 'Done', comments: 1, closedWithReason: true };
const OPEN_TICKET: Ticket = { status: 'To Do', comments: 0 };
const FLOW_STEPS = ['create_ticket', 'charge_card', 'reship'] as const;
const flowSteps = (status: string, comps: readonly (string | null)[]) =>
  FLOW_STEPS.map((tool, i) => [tool, status, comps[i] ?? null] as const);
/** The run-level events of an unwind that ended `to`. */
const unwound = (to: string): EventExpectation[] => [
  { stepIdx: null, kind: 'run_transition', to: 'COMPENSATING', times: 1 },
  { stepIdx: null, kind: 'run_transition', to, times: 1 },
];
/** Each step compensated once: one attempt sent, one move to compensated. */
const compensatedOnce = (stepIdx: number): EventExpectation[] => [
  { stepIdx, kind: 'compensation', to: 'running', times: 1 },
  { stepIdx, kind: 'compensation', to: 'compensated', times: 1 },
];
/** A forward step recovered by a lookup by key, never declared not executed nor sent again. */
const foundByKey = (stepIdx: number): EventExpectation[] => [
  { stepIdx, kind: 'lookup', detail: SAW_IT },
  { stepIdx, kind: 'transition', to: 'CONFIRMED', times: 1 },
  { stepIdx, kind: 'transition', to: 'NOT_EXECUTED', times: 0 },
];

function crashRow(step: FlowStep, ledger: LedgerExpectation): Row {
  const runId = `matrix-crash-${step.tool}`;
  return {
    box: '(a) crash after the tool, before the record',
    name: `${step.tool}: executor SIGKILLed after the tool returned; found by key, then undone once`,
    runId,
    setup: { kind: 'crash', step },
    play: afterCrash,
    ledger,
    log: {
      run: 'COMPENSATED',
      steps: [[step.tool, 'CONFIRMED', 'compensated']],
      attempts: [1],
      compensationAttempts: [1],
      events: [
        { stepIdx: 0, kind: 'attempt', times: 1 },
        ...foundByKey(0),
        ...compensatedOnce(0),
        ...unwound('COMPENSATED'),
      ],
    },
  };
}

const NONE = { tickets: [], charges: [], shipments: [] } as const;

const MATRIX: readonly Row[] = [
  crashRow(TICKET, { ...NONE, tickets: [CLOSED_WITH_REASON] }),
  crashRow(CHARGE, { ...NONE, charges: [{ refunds: 1, amount: CHARGE_AMOUNT }] }),
  crashRow(RESHIP, { ...NONE, shipments: [{ status: 'canceled' }] }),
  {
    box: '(b) every queue message redelivered',
    name: "each execute job delivered twice more as it is sent, the outbox republished, the compensators' run locks lost twice",
    runId: 'matrix-redelivery',
    setup: { kind: 'none' },
    play: playRedelivery,
    ledger: {
      tickets: [CLOSED_WITH_REASON],
      charges: [{ refunds: 1, amount: CHARGE_AMOUNT }],
      shipments: [{ status: 'canceled' }],
    },
    log: {
      run: 'COMPENSATED',
      steps: flowSteps('CONFIRMED', ['compensated', 'compensated', 'compensated']),
      attempts: [1, 1, 1],
      compensationAttempts: [1, 1, 1],
      events: [
        ...[0, 1, 2].flatMap((i) => [
          { stepIdx: i, kind: 'transition', to: 'CONFIRMED', times: 1 },
          { stepIdx: i, kind: 'attempt', times: 1 },
          ...compensatedOnce(i),
        ]),
        ...unwound('COMPENSATED'),
      ],
    },
  },
  {
    box: '(c) a key reused with a changed payload',
    name: 'create_ticket and charge_card retried with another order and amount: 409, nothing sent',
    runId: 'matrix-mismatch',
    setup: { kind: 'forward', steps: 2 },
    play: playMismatch,
    ledger: { ...NONE, tickets: [OPEN_TICKET], charges: [{ refunds: 0, amount: CHARGE_AMOUNT }] },
    log: {
      run: 'COMPLETED',
      steps: [
        ['create_ticket', 'CONFIRMED', null],
        ['charge_card', 'CONFIRMED', null],
      ],
      attempts: [1, 1],
      events: [
        // The refused calls left no trace as retries of the steps: the log holds the first payload only.
        { stepIdx: 0, kind: 'retry_call', detail: { args: { orderId: '1184' } }, times: 0 },
        { stepIdx: 1, kind: 'retry_call', detail: { args: { amount: 2 * CHARGE_AMOUNT } }, times: 0 },
        { stepIdx: 0, kind: 'attempt', times: 1 },
        { stepIdx: 1, kind: 'attempt', times: 1 },
        { stepIdx: null, kind: 'run_transition', to: 'COMPLETED', times: 1 },
      ],
    },
  },
  {
    box: '(d) downstream state visible only after a delay',
    name: 'Jira answers 504 after creating; its search lags; the reworded retry waits, then finds the ticket',
    runId: 'matrix-lag-jira',
    setup: { kind: 'none' },
    play: (runId) =>
      playLaggingLookup(
        runId,
        TICKET,
        { vendor: 'jira', method: 'POST', path: '/rest/api/3/issue' },
        { tool: TICKET.tool, args: { ...TICKET.args, summary: 'Order #1183 refund' } },
      ),
    ledger: { ...NONE, tickets: [OPEN_TICKET] },
    log: {
      run: 'COMPLETED',
      steps: [['create_ticket', 'CONFIRMED', null]],
      attempts: [1],
      events: [
        { stepIdx: 0, kind: 'transition', to: 'UNKNOWN', times: 1 },
        { stepIdx: 0, kind: 'lookup', detail: NOT_YET },
        { stepIdx: 0, kind: 'retry_call', detail: { reworded: true } },
        ...foundByKey(0),
      ],
    },
  },
  {
    box: '(d) downstream state visible only after a delay',
    name: 'Stripe answers 504 after charging; its search lags; the retry waits, then finds the charge',
    runId: 'matrix-lag-stripe',
    setup: { kind: 'none' },
    play: (runId) =>
      playLaggingLookup(
        runId,
        CHARGE,
        { vendor: 'stripe', method: 'POST', path: '/v1/payment_intents' },
        CHARGE,
      ),
    ledger: { ...NONE, charges: [{ refunds: 0, amount: CHARGE_AMOUNT }] },
    log: {
      run: 'COMPLETED',
      steps: [['charge_card', 'CONFIRMED', null]],
      attempts: [1],
      events: [
        { stepIdx: 0, kind: 'transition', to: 'UNKNOWN', times: 1 },
        { stepIdx: 0, kind: 'lookup', detail: NOT_YET },
        ...foundByKey(0),
      ],
    },
  },
  {
    box: '(e) each compensation failing on its own',
    name: 'close_ticket meets a 503: unknown, looked up by key, sent again with the same key; one comment',
    runId: 'matrix-comp-ticket',
    setup: { kind: 'forward', steps: 3 },
    play: (runId) =>
      unwindWithFault(runId, (run) => ({
        vendor: 'jira',
        method: 'POST',
        path: `/rest/api/3/issue/${ticketOf(run)}/transitions`,
        nth: 1,
        kind: 'status',
        status: 503,
        body: { errorMessages: ['Service Unavailable'], errors: {} },
      })),
    ledger: {
      tickets: [CLOSED_WITH_REASON],
      charges: [{ refunds: 1, amount: CHARGE_AMOUNT }],
      shipments: [{ status: 'canceled' }],
    },
    log: {
      run: 'COMPENSATED',
      steps: flowSteps('CONFIRMED', ['compensated', 'compensated', 'compensated']),
      attempts: [1, 1, 1],
      compensationAttempts: [2, 1, 1],
      events: [
        { stepIdx: 0, kind: 'compensation', to: 'unknown', times: 1 },
        { stepIdx: 0, kind: 'compensation', to: 'running', times: 2 },
        { stepIdx: 0, kind: 'compensation', to: 'compensated', times: 1 },
        ...compensatedOnce(1),
        ...compensatedOnce(2),
        ...unwound('COMPENSATED'),
      ],
    },
  },
  {
    box: '(e) each compensation failing on its own',
    name: 'refund succeeds while its answer is lost (504 after the effect): found by key, never a second refund',
    runId: 'matrix-comp-refund',
    setup: { kind: 'forward', steps: 3 },
    play: (runId) =>
      unwindWithFault(runId, () => ({
        vendor: 'stripe',
        method: 'POST',
        path: '/v1/refunds',
        nth: 1,
        kind: 'error_after',
      })),
    ledger: {
      tickets: [CLOSED_WITH_REASON],
      charges: [{ refunds: 1, amount: CHARGE_AMOUNT }],
      shipments: [{ status: 'canceled' }],
    },
    log: {
      run: 'COMPENSATED',
      steps: flowSteps('CONFIRMED', ['compensated', 'compensated', 'compensated']),
      attempts: [1, 1, 1],
      compensationAttempts: [1, 1, 1],
      events: [
        { stepIdx: 1, kind: 'compensation', to: 'unknown', times: 1 },
        {
          stepIdx: 1,
          kind: 'compensation',
          to: 'compensated',
          cause: 'lookup: found by the compensation key',
        },
        ...compensatedOnce(0),
        ...compensatedOnce(1),
        ...compensatedOnce(2),
        ...unwound('COMPENSATED'),
      ],
    },
  },
  {
    box: '(e) each compensation failing on its own',
    name: 'cancel_shipment refused past its budget: MANUAL_INTERVENTION; nothing it guards is undone',
    runId: 'matrix-comp-shipment',
    setup: { kind: 'forward', steps: 3 },
    play: (runId) =>
      unwindWithFault(runId, (run) => ({
        vendor: 'shipping',
        method: 'POST',
        path: `/v1/shipments/${shipmentOf(run)}/cancel`,
        every: true,
        kind: 'status',
        status: 422,
        body: { error: { code: 'shipment_in_transit', message: 'The shipment has left the warehouse.' } },
      })),
    ledger: {
      tickets: [OPEN_TICKET],
      charges: [{ refunds: 0, amount: CHARGE_AMOUNT }],
      shipments: [{ status: 'created' }],
    },
    log: {
      run: 'MANUAL_INTERVENTION',
      steps: flowSteps('CONFIRMED', ['pending', 'pending', 'failed']),
      attempts: [1, 1, 1],
      // COMPENSATION_MAX_ATTEMPTS=3 (support-harness.ts).
      compensationAttempts: [0, 0, 3],
      events: [
        { stepIdx: 2, kind: 'compensation', to: 'running', times: 3 },
        { stepIdx: 2, kind: 'compensation', to: 'failed', times: 3 },
        { stepIdx: 2, kind: 'compensation', to: 'failed', cause: /attempt budget exhausted/ },
        { stepIdx: 0, kind: 'compensation', to: 'running', times: 0 },
        { stepIdx: 1, kind: 'compensation', to: 'running', times: 0 },
        ...unwound('MANUAL_INTERVENTION'),
      ],
    },
  },
  {
    box: '(f) the target changed before a compensation',
    name: 'a person closed the ticket: compensated with that evidence; nothing sent to Jira',
    runId: 'matrix-person-closed',
    setup: { kind: 'forward', steps: 3 },
    play: async (runId) => {
      const ticket = ticketOf(await h.saga.getRun(runId));
      await personTransitions(ticket, '31');
      const since = new Date().toISOString();
      await unwindToEnd(runId);
      expect(writesSince(since, ticket)).toEqual([]);
    },
    ledger: {
      tickets: [{ status: 'Done', comments: 0 }],
      charges: [{ refunds: 1, amount: CHARGE_AMOUNT }],
      shipments: [{ status: 'canceled' }],
    },
    log: {
      run: 'COMPENSATED',
      steps: flowSteps('CONFIRMED', ['compensated', 'compensated', 'compensated']),
      attempts: [1, 1, 1],
      compensationAttempts: [0, 1, 1],
      events: [
        {
          stepIdx: 0,
          kind: 'compensation',
          to: 'compensated',
          cause: 'precondition: the target is already in the compensated state; nothing sent',
          detail: { precondition: 'already_compensated', forwardTool: 'create_ticket' },
          times: 1,
        },
        { stepIdx: 0, kind: 'compensation', to: 'running', times: 0 },
        ...compensatedOnce(1),
        ...compensatedOnce(2),
        ...unwound('COMPENSATED'),
      ],
    },
  },
  {
    box: '(f) the target changed before a compensation',
    name: 'a person refunded the charge in the dashboard: compensated with that evidence; no second refund',
    runId: 'matrix-person-refunded',
    setup: { kind: 'forward', steps: 3 },
    play: async (runId) => {
      const pi = (await h.saga.getRun(runId)).steps.find((s) => s.tool === CHARGE.tool)!.externalRef!;
      await personRefunds(pi);
      const since = new Date().toISOString();
      await unwindToEnd(runId);
      expect(writesSince(since, '/v1/refunds')).toEqual([]);
    },
    ledger: {
      tickets: [{ status: 'Done', comments: 1 }],
      charges: [{ refunds: 1, amount: CHARGE_AMOUNT }],
      shipments: [{ status: 'canceled' }],
    },
    log: {
      run: 'COMPENSATED',
      steps: flowSteps('CONFIRMED', ['compensated', 'compensated', 'compensated']),
      attempts: [1, 1, 1],
      compensationAttempts: [1, 0, 1],
      events: [
        {
          stepIdx: 1,
          kind: 'compensation',
          to: 'compensated',
          cause: 'precondition: the target is already in the compensated state; nothing sent',
          detail: { precondition: 'already_compensated', forwardTool: 'charge_card' },
          times: 1,
        },
        { stepIdx: 1, kind: 'compensation', to: 'running', times: 0 },
        ...compensatedOnce(0),
        ...compensatedOnce(2),
        ...unwound('COMPENSATED'),
      ],
    },
  },
  {
    box: '(f) the target changed before a compensation',
    name: 'a person moved the ticket to In Progress: not overwritten; MANUAL_INTERVENTION with the case',
    runId: 'matrix-person-working',
    setup: { kind: 'forward', steps: 3 },
    play: async (runId) => {
      await personTransitions(ticketOf(await h.saga.getRun(runId)), '21');
      await unwindToEnd(runId);
      const run = await h.saga.getRun(runId);
      expect(run.cases).toEqual([
        expect.objectContaining({ stepIdx: 0, reason: expect.stringContaining('is In Progress') as unknown }),
      ]);
    },
    ledger: {
      tickets: [{ status: 'In Progress', comments: 0 }],
      charges: [{ refunds: 1, amount: CHARGE_AMOUNT }],
      shipments: [{ status: 'canceled' }],
    },
    log: {
      run: 'MANUAL_INTERVENTION',
      steps: flowSteps('CONFIRMED', ['failed', 'compensated', 'compensated']),
      attempts: [1, 1, 1],
      compensationAttempts: [0, 1, 1],
      events: [
        {
          stepIdx: 0,
          kind: 'compensation',
          to: 'failed',
          cause: /the target changed since the forward step/,
          detail: { precondition: 'changed' },
          times: 1,
        },
        { stepIdx: 0, kind: 'compensation', to: 'running', times: 0 },
        ...compensatedOnce(1),
        ...compensatedOnce(2),
        ...unwound('MANUAL_INTERVENTION'),
      ],
    },
  },
  {
    box: '(g) expire approval during recovery',
    name: "the run's authority lapsed: the unwind, refund included, waits for a renewal; approved, each is undone once",
    runId: 'matrix-authority-lapsed',
    setup: { kind: 'forward', steps: 3 },
    play: playExpiredAuthority,
    ledger: {
      tickets: [CLOSED_WITH_REASON],
      charges: [{ refunds: 1, amount: CHARGE_AMOUNT }],
      shipments: [{ status: 'canceled' }],
    },
    log: {
      run: 'COMPENSATED',
      steps: flowSteps('CONFIRMED', ['compensated', 'compensated', 'compensated']),
      attempts: [1, 1, 1],
      compensationAttempts: [1, 1, 1],
      events: [
        { stepIdx: null, kind: 'decision', to: 'approved', cause: /^renewal approval/, times: 1 },
        ...compensatedOnce(0),
        ...compensatedOnce(1),
        ...compensatedOnce(2),
        ...unwound('COMPENSATED'),
      ],
    },
  },
];

// ---------------------------------------------------------------------------------------------------------
// Setup: the shared processes, the crashes, the forward steps.

/** The executors started to die: each takes one crash row's call and is SIGKILLed at the crash point. */
const CRASHING_EXECUTOR = ['executor', { SAGA_CRASH_POINTS: CrashPoint.AFTER_TOOL_BEFORE_RECORD }] as const;

/**
 * Sends the crash row's only step while every running executor is one that dies at the crash point, and
 * waits for the one that took it to die. Records how, and what the sandbox held at that moment.
 */
async function crash(row: Row & { setup: { kind: 'crash' } }): Promise<void> {
  const alive = h.procs.filter(
    (p) => p.role === 'executor' && p.child.exitCode === null && p.child.signalCode === null,
  );
  await h.saga.createRun({ runId: row.runId });
  const { tool, args } = row.setup.step;
  await h.saga.call(row.runId, tool, args, { stepIdx: 0, waitMs: 0 });
  const died = await Promise.race([
    ...alive.map((p) => p.exited.then((exit) => ({ p, exit }))),
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no executor died for ${row.runId}`)), 30_000),
    ),
  ]);
  const run = await h.saga.getRun(row.runId);
  const l = runLedger(h.sandbox.admin.ledger(), run);
  crashes.set(row.runId, {
    signal: died.exit.signal,
    output: died.p.output(),
    effectsAtCrash: l.tickets.length + l.charges.length + l.shipments.length,
    statusAtCrash: run.steps[0]!.status,
  });
}

async function forward(row: Row & { setup: { kind: 'forward' } }): Promise<void> {
  await h.saga.createRun({ runId: row.runId });
  for (const [i, step] of [TICKET, CHARGE, RESHIP].slice(0, row.setup.steps).entries()) {
    const outcome = await callUntilSettled(() =>
      h.saga.call(row.runId, step.tool, step.args, { stepIdx: i, waitMs: 5_000 }),
    );
    expect(outcome.status).toBe('CONFIRMED');
  }
}

beforeAll(async () => {
  // No healthy executor yet: one executor per crash row, each to die on the first call it takes.
  const crashRows = MATRIX.filter((r) => r.setup.kind === 'crash');
  h = await startSupportHarness(
    'matrix',
    ['relay', 'reconciler', 'compensator', 'compensator', ...crashRows.map(() => CRASHING_EXECUTOR)],
    { env: { PG_APPLICATION_NAME: APP_NAME } },
  );
  const connection = bullmqConnection(h.env.redisUrl);
  executeQueue = createExecuteQueue(connection, h.env.queuePrefix);
  for (const row of crashRows) {
    await crash(row as Parameters<typeof crash>[0]);
  }
  h.start('executor');
  await Promise.all(
    MATRIX.filter((r) => r.setup.kind === 'forward').map((r) => forward(r as Parameters<typeof forward>[0])),
  );
}, 120_000);

afterAll(async () => {
  await executeQueue?.close();
  await h?.close();
});

// ---------------------------------------------------------------------------------------------------------
// The assertions every row makes.

function assertLedger(row: Row, run: RunView): void {
  const ledger = h.sandbox.admin.ledger();
  const mine = runLedger(ledger, run);
  expect(
    mine.tickets.map((t) => ({ status: t.status, comments: t.comments.length })),
    'tickets',
  ).toEqual(row.ledger.tickets.map((t) => ({ status: t.status, comments: t.comments })));
  row.ledger.tickets.forEach((t, i) => {
    if (t.closedWithReason)
      expect(mine.tickets[i]!.comments[0], 'closing comment').toContain(reasonOf(row.runId));
  });
  expect(
    mine.charges.map((c) => ({ refunds: c.refunds, amount: c.amount })),
    'charges',
  ).toEqual(row.ledger.charges.map((c) => ({ refunds: c.refunds, amount: c.amount ?? CHARGE_AMOUNT })));
  for (const c of mine.charges) expect(c.amountRefunded).toBe(c.refunds > 0 ? c.amount : 0);
  expect(
    mine.shipments.map((s) => s.status),
    'shipments',
  ).toEqual(row.ledger.shipments.map((s) => s.status));
  // No run of the matrix ever writes to a customer.
  expect(ledger.email.emails).toEqual([]);
}

/** One row of the run's `step_events`, as the saga log holds it (run-level events have no step). */
interface LoggedEvent {
  readonly stepIdx: number | null;
  readonly kind: string;
  readonly from: string | null;
  readonly to: string | null;
  readonly cause: string;
  readonly detail: unknown;
}

/** Every event of the run, oldest first, read from the saga log itself. */
async function eventsOf(runId: string): Promise<LoggedEvent[]> {
  const rows = await h.env.db
    .selectFrom('step_events')
    .select(['step_idx', 'kind', 'from_status', 'to_status', 'cause', 'detail'])
    .where('run_id', '=', runId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    stepIdx: r.step_idx,
    kind: r.kind,
    from: r.from_status,
    to: r.to_status,
    cause: r.cause,
    detail: r.detail,
  }));
}

function matches(e: LoggedEvent, x: EventExpectation): boolean {
  if (e.stepIdx !== x.stepIdx) return false;
  if (e.kind !== x.kind) return false;
  if (x.to !== undefined && e.to !== x.to) return false;
  if (typeof x.cause === 'string' && e.cause !== x.cause) return false;
  if (x.cause instanceof RegExp && !x.cause.test(e.cause)) return false;
  if (x.detail === undefined) return true;
  const anyOf: readonly Record<string, unknown>[] = Array.isArray(x.detail) ? x.detail : [x.detail];
  return anyOf.some((d) => contains(e.detail, d));
}

/** Whether `actual` holds every field of `expected`, recursively (a deep partial match). */
function contains(actual: unknown, expected: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return actual === expected;
  if (actual === null || typeof actual !== 'object') return false;
  return Object.entries(expected).every(([k, v]) => contains((actual as Record<string, unknown>)[k], v));
}

async function assertLog(row: Row, run: RunView): Promise<void> {
  expect(run.status, 'run status').toBe(row.log.run);
  expect(
    run.steps.map((s) => [s.tool, s.status, s.compensationStatus]),
    'steps: tool, status, compensation status',
  ).toEqual(row.log.steps);
  expect(
    run.steps.map((s) => s.attempts),
    'forward attempts',
  ).toEqual(row.log.attempts);
  if (row.log.compensationAttempts) {
    const comps = await h.env.db
      .selectFrom('compensations')
      .select(['step_idx', 'attempts'])
      .where('run_id', '=', row.runId)
      .orderBy('step_idx')
      .execute();
    expect(
      comps.map((c) => c.attempts),
      'compensation attempts',
    ).toEqual(row.log.compensationAttempts);
  }
  const events = await eventsOf(row.runId);
  const missing = row.log.events.filter((x) => {
    const n = events.filter((e) => matches(e, x)).length;
    return x.times === undefined ? n === 0 : n !== x.times;
  });
  expect(missing, `events not as expected; the run's events:\n${describeEvents(events)}`).toEqual([]);
}

const describeEvents = (events: readonly LoggedEvent[]) =>
  events
    .map(
      (e) =>
        `  ${e.stepIdx ?? '-'} ${e.kind} ${e.from ?? ''}→${e.to ?? ''} ${e.cause} ${JSON.stringify(e.detail)}`,
    )
    .join('\n');

describe('failure matrix', () => {
  for (const row of MATRIX)
    it(`${row.box}: ${row.name}`, async () => {
      await row.play(row.runId);
      const run = await h.saga.getRun(row.runId);
      assertLedger(row, run);
      await assertLog(row, run);
    });
});
