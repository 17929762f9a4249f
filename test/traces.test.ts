/**
 * Traces end to end (issue 14): a W3C `traceparent` on `POST /v1/runs/{id}/calls` is carried through the
 * outbox row and the execute job to the executor's span and, as the vendor request's own `traceparent`
 * header, to the vendor (the sandbox's shipping API, which records request headers); the trace id is on the
 * saga-log row, on every event of the step, and in the run view. An UNKNOWN step's reconciler lookup reaches
 * the vendor in the same trace.
 *
 * In one process: the API (built in-process, fast path on, so the job is in BullMQ when the call answers),
 * the executor (`executeStep` on the job as BullMQ holds it), the reconciler's `reconcileStep`, and an
 * in-memory span exporter registered as the global tracer provider, as `startTracing` registers the OTLP one.
 */
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  bullmqConnection,
  claimStep,
  createApiToken,
  createLogger,
  createToolRegistry,
  executeJobSchema,
  parseTraceparent,
  StepEventKind,
  StepStatus,
  transitionStep,
  type ExecuteJob,
  type StepRow,
} from '@agent-saga/core';
import {
  createTestEnv,
  installInMemoryTracing,
  type InMemoryTracing,
  type TestEnv,
} from '@agent-saga/core/testing';
import { createShippingTools, shippingConfigFromEnv } from '@agent-saga/connectors';
import {
  buildApi,
  createExecuteQueue,
  executeStep,
  loadDispatcherConfig,
  type ApiApp,
} from '@agent-saga/dispatcher';
import { claimReconcilableSteps, reconcileStep } from '@agent-saga/reconciler';
import { startSandbox, type RunningSandbox } from '@agent-saga/sandbox';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const CALLER_TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
const RESHIP = { orderId: '1183', items: [{ sku: 'TEE-L', quantity: 1 }], reason: 'lost in transit' };

let env: TestEnv;
let sandbox: RunningSandbox;
let tracing: InMemoryTracing;
let app: ApiApp;
let queue: Queue<ExecuteJob>;
let token: string;
const logger = createLogger({ level: 'silent', name: 'traces-test' });
let registry: ReturnType<typeof createToolRegistry>;

beforeAll(async () => {
  tracing = installInMemoryTracing();
  env = await createTestEnv('traces');
  sandbox = await startSandbox();
  registry = createToolRegistry(
    createShippingTools(
      shippingConfigFromEnv({
        SHIPPING_API_BASE: sandbox.urls.shipping,
        SHIPPING_API_KEY: sandbox.credentials.shippingApiKey,
      }),
    ),
  );
  const config = loadDispatcherConfig({
    ...env.env,
    // Not loaded here (the registry is built below); the config only requires a module to be named.
    SAGA_TOOLS: 'test/fixtures/effect-tools.ts',
    SAGA_FAST_PATH: 'true',
    CALL_WAIT_DEFAULT_MS: '1',
    LOG_LEVEL: 'silent',
  });
  queue = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
  ({ app } = await buildApi({ db: env.db, schema: env.schema, registry, queue, config, logger }));
  await app.ready();
  token = await createApiToken(env.db, { tenantId: 't1', role: 'agent' });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await queue?.obliterate({ force: true }).catch(() => undefined);
  await queue?.close();
  await sandbox?.close();
  await env?.close();
  await tracing?.close();
});

beforeEach(() => {
  tracing.reset();
  sandbox.admin.reset();
});

const auth = () => ({ authorization: `Bearer ${token}` });

async function newRun(runId: string): Promise<void> {
  const r = await app.inject({ method: 'POST', url: '/v1/runs', headers: auth(), payload: { runId } });
  expect(r.statusCode).toBe(201);
}

/** POSTs a reship as step 0 of `runId`, with `traceparent` when given; returns the stored step. */
async function callReship(runId: string, traceparent?: string): Promise<StepRow> {
  await newRun(runId);
  const r = await app.inject({
    method: 'POST',
    url: `/v1/runs/${runId}/calls`,
    headers: { ...auth(), ...(traceparent === undefined ? {} : { traceparent }) },
    payload: { tool: 'reship', args: RESHIP, stepIdx: 0, waitMs: 0 },
  });
  expect([200, 202]).toContain(r.statusCode);
  return env.db
    .selectFrom('saga_log')
    .selectAll()
    .where('run_id', '=', runId)
    .where('step_idx', '=', 0)
    .executeTakeFirstOrThrow();
}

/** The job the fast path published for `step`, as the executor receives it (parsed by its schema). */
async function jobOf(step: StepRow): Promise<ExecuteJob> {
  const job = await queue.getJob(step.idempotency_key);
  expect(job).toBeDefined();
  return executeJobSchema.parse(job!.data);
}

async function execute(job: ExecuteJob): Promise<void> {
  const r = await executeStep(
    {
      db: env.db,
      registry,
      config: { SAGA_DB_SCHEMA: env.schema, LEASE_MARGIN_MS: 2000 },
      workerId: 'traces-executor',
      crash: () => undefined,
      logger,
      shutdownSignal: new AbortController().signal,
    },
    job,
    job.key,
  );
  expect(r).toMatchObject({ kind: 'executed', outcome: StepStatus.CONFIRMED });
}

/** The shipping API's requests on `/v1/shipments` (a reship POST, a lookup GET), oldest first. */
const shipmentRequests = (method: 'GET' | 'POST') =>
  sandbox.admin
    .requests()
    .filter((q) => q.vendor === 'shipping' && q.method === method && q.path === '/v1/shipments');

describe('one trace from intake to the vendor', () => {
  it('carries the caller traceparent through the outbox, the job and the executor to the vendor', async () => {
    const step = await callReship('tr-given', CALLER_TRACEPARENT);
    // Stored with the intent: the caller's trace id, and the intake span as the step's span.
    expect(step.trace_id?.toString('hex')).toBe(TRACE_ID);
    const intake = tracing.spans().find((s) => s.name === 'saga.intake');
    expect(intake?.spanContext().traceId).toBe(TRACE_ID);
    expect(intake?.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(step.span_id?.toString('hex')).toBe(intake!.spanContext().spanId);

    // The outbox row and the job carry the intake span's traceparent.
    const outbox = await env.db
      .selectFrom('outbox')
      .select('payload')
      .where('run_id', '=', 'tr-given')
      .execute();
    const expectedParent = `00-${TRACE_ID}-${intake!.spanContext().spanId}-01`;
    expect(outbox.map((o) => (o.payload as { traceparent?: string }).traceparent)).toEqual([expectedParent]);
    const job = await jobOf(step);
    expect(job.traceparent).toBe(expectedParent);

    await execute(job);

    // The executor's span: a child of the intake span, in the caller's trace.
    const exec = tracing.spans().find((s) => s.name === 'saga.execute reship');
    expect(exec?.spanContext().traceId).toBe(TRACE_ID);
    expect(exec?.parentSpanContext?.spanId).toBe(intake!.spanContext().spanId);
    // The vendor saw the executor span's traceparent on the reship request.
    const sent = shipmentRequests('POST');
    expect(sent).toHaveLength(1);
    const seen = parseTraceparent(sent[0]!.traceparent);
    expect(seen).toEqual({ traceId: TRACE_ID, spanId: exec!.spanContext().spanId, flags: 1 });
    // Exported spans form one trace.
    expect(new Set(tracing.spans().map((s) => s.spanContext().traceId))).toEqual(new Set([TRACE_ID]));

    // Every event of the step carries the trace id (intake, attempt, outcome).
    const events = await env.db
      .selectFrom('step_events')
      .select(['kind', 'to_status', 'trace_id'])
      .where('run_id', '=', 'tr-given')
      .where('step_idx', '=', 0)
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.to_status ?? e.kind)).toEqual([
      'INTENDED',
      StepEventKind.ATTEMPT,
      'CONFIRMED',
    ]);
    expect(events.map((e) => e.trace_id?.toString('hex'))).toEqual([TRACE_ID, TRACE_ID, TRACE_ID]);

    // The run view shows it.
    const view = await app.inject({ method: 'GET', url: '/v1/runs/tr-given', headers: auth() });
    expect(view.statusCode).toBe(200);
    expect(view.json<{ steps: { traceId: string | null }[] }>().steps.map((s) => s.traceId)).toEqual([
      TRACE_ID,
    ]);
  });

  it('starts a fresh trace for a call without a traceparent, and for an invalid one (no 400)', async () => {
    const fresh = await callReship('tr-none');
    const invalid = [
      `00-${TRACE_ID.toUpperCase()}-${CALLER_SPAN}-01`, // upper-case hex
      `ff-${TRACE_ID}-${CALLER_SPAN}-01`, // unknown version
      `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`, // zero trace id
      'garbage',
    ];
    const ids = [fresh.trace_id?.toString('hex')];
    for (const [i, header] of invalid.entries()) {
      const step = await callReship(`tr-bad-${i}`, header);
      ids.push(step.trace_id?.toString('hex'));
      // The job still carries a valid traceparent of the new trace.
      expect(parseTraceparent((await jobOf(step)).traceparent)?.traceId).toBe(step.trace_id?.toString('hex'));
    }
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect(id).not.toBe(TRACE_ID);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('the reconciler looks an UNKNOWN step up in its trace', () => {
  it('sends the step trace id to the vendor on the lookup', async () => {
    const step = await callReship('tr-unknown', CALLER_TRACEPARENT);
    const intakeSpan = step.span_id!.toString('hex');
    // An executor claimed it and met a 504: UNKNOWN, nothing at the vendor.
    const claim = await claimStep(env.db, {
      runId: step.run_id,
      stepIdx: 0,
      key: step.idempotency_key,
      worker: 'gone-executor',
      leaseMs: 60_000,
      jobId: step.idempotency_key,
      schema: env.schema,
    });
    expect(claim.kind).toBe('claimed');
    await env.db.transaction().execute((trx) =>
      transitionStep(trx, {
        runId: step.run_id,
        stepIdx: 0,
        to: StepStatus.UNKNOWN,
        onlyFrom: [StepStatus.INTENDED],
        leaseOwner: 'gone-executor',
        cause: 'executor: tool threw',
        patch: { lease_until: null, lease_owner: null },
        schema: env.schema,
      }),
    );
    tracing.reset();
    const [claimed] = await claimReconcilableSteps(env.db, {
      owner: 'traces-reconciler',
      leaseMs: 30_000,
      limit: 1,
      key: step.idempotency_key,
      schema: env.schema,
    });
    expect(claimed?.status).toBe(StepStatus.UNKNOWN);
    await reconcileStep(
      {
        db: env.db,
        schema: env.schema,
        registry,
        owner: 'traces-reconciler',
        recheckMs: 10,
        policy: {
          maxLookupErrors: 3,
          maxUnknownAgeMs: 3_600_000,
          backoffBaseMs: 100,
          backoffMaxMs: 1000,
          redispatchBudget: { maxRedispatches: 3 },
        },
        logger,
      },
      claimed!,
    );

    const lookups = tracing.spans().filter((s) => s.name === 'saga.lookup reship');
    expect(lookups.length).toBeGreaterThan(0);
    const vendorSaw = shipmentRequests('GET');
    expect(vendorSaw).toHaveLength(lookups.length);
    for (const [i, lookup] of lookups.entries()) {
      expect(lookup.spanContext().traceId).toBe(TRACE_ID);
      expect(lookup.parentSpanContext?.spanId).toBe(intakeSpan);
      expect(parseTraceparent(vendorSaw[i]!.traceparent)).toEqual({
        traceId: TRACE_ID,
        spanId: lookup.spanContext().spanId,
        flags: 1,
      });
    }
    // The reconciler's events (its lookups, the verdict) carry the trace id too, through the trigger.
    const events = await env.db
      .selectFrom('step_events')
      .select(['kind', 'trace_id'])
      .where('run_id', '=', 'tr-unknown')
      .where('step_idx', '=', 0)
      .execute();
    expect(events.some((e) => e.kind === StepEventKind.LOOKUP)).toBe(true);
    expect(events.map((e) => e.trace_id?.toString('hex'))).toEqual(events.map(() => TRACE_ID));
  });
});
