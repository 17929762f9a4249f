import { afterEach, describe, expect, it } from 'vitest';
import {
  ApprovalExpiredError,
  ConflictError,
  CorrectionOutcomeUnknownError,
  createSagaClient,
  InvalidRequestError,
  NotFoundError,
  SagaApiError,
  ServiceUnavailableError,
  ToolOutcomeUnknown,
  UnauthorizedError,
  UnexpectedResponseError,
} from '@agent-saga/client';
import {
  apiError,
  confirmed,
  runView,
  scripted,
  startFakeDispatcher,
  stepView,
  type Answer,
  type FakeDispatcher,
} from './fake-dispatcher.js';

const TOKEN = 'sgt_test-token';
let server: FakeDispatcher | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function clientAnswering(...answers: Answer[]) {
  return clientWith({}, ...answers);
}

async function clientWith(options: { readonly unavailableRetryMs?: number }, ...answers: Answer[]) {
  server = await startFakeDispatcher(scripted(...answers));
  return { client: createSagaClient({ baseUrl: server.url, token: TOKEN, ...options }), server };
}

/** The rejection of `p`, so that several properties of one error can be asserted. */
async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

describe('createRun', () => {
  it('posts the run id and metadata with the bearer token, and tells a new run from a repeat', async () => {
    const { client, server } = await clientAnswering(
      { status: 201, body: { runId: 'order-42', status: 'RUNNING' } },
      { status: 200, body: { runId: 'order-42', status: 'RUNNING' } },
    );
    const first = await client.createRun({ runId: 'order-42', metadata: { customer: 'c-1' } });
    const again = await client.createRun({ runId: 'order-42' });

    expect(first).toEqual({ runId: 'order-42', status: 'RUNNING', created: true });
    expect(again.created).toBe(false);
    const [req] = server.requests;
    expect(req).toMatchObject({ method: 'POST', url: '/v1/runs' });
    expect(req?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.body).toEqual({ runId: 'order-42', metadata: { customer: 'c-1' } });
  });

  it('keeps a path prefix of the base URL', async () => {
    server = await startFakeDispatcher(scripted({ status: 201, body: { runId: 'r', status: 'RUNNING' } }));
    const client = createSagaClient({ baseUrl: `${server.url}/saga/`, token: TOKEN });
    await client.createRun();
    expect(server.requests[0]?.url).toBe('/saga/v1/runs');
    expect(server.requests[0]?.body).toEqual({});
  });

  it('sends through the fetch it is given, with the same request and the same answer', async () => {
    server = await startFakeDispatcher(scripted({ status: 201, body: { runId: 'r', status: 'RUNNING' } }));
    const sent: string[] = [];
    const client = createSagaClient({
      baseUrl: server.url,
      token: TOKEN,
      fetch: (input, init) => {
        sent.push(`${init?.method} ${input instanceof Request ? input.url : input.toString()}`);
        return globalThis.fetch(input, init);
      },
    });
    expect(await client.createRun({ runId: 'r' })).toEqual({ runId: 'r', status: 'RUNNING', created: true });
    expect(sent).toEqual([`POST ${server.url}/v1/runs`]);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(server.requests[0]?.body).toEqual({ runId: 'r' });
  });
});

describe('call', () => {
  it('sends tool, args, stepIdx and waitMs to the run, and resolves CONFIRMED with its result', async () => {
    const { client, server } = await clientAnswering(confirmed(3, { replayed: true }));
    const outcome = await client.call(
      'run:1',
      'create_ticket',
      { summary: 's' },
      { stepIdx: 3, waitMs: 500 },
    );

    expect(outcome).toEqual({
      status: 'CONFIRMED',
      stepIdx: 3,
      idempotencyKey: 'key-3',
      externalRef: 'REF-3',
      result: { ok: true },
      replayed: true,
    });
    const [req] = server.requests;
    expect(req).toMatchObject({ method: 'POST', url: '/v1/runs/run%3A1/calls' });
    expect(req?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(req?.body).toEqual({ tool: 'create_ticket', args: { summary: 's' }, stepIdx: 3, waitMs: 500 });
  });

  it('reads an answer that arrives in many pieces whole, its multi-byte characters included', async () => {
    // About 600 kB: more than one read of the socket, so characters of 2 to 4 bytes straddle the pieces.
    const text = 'é€😀-'.repeat(60_000);
    const { client } = await clientAnswering(confirmed(0, { result: { text } }));
    const outcome = await client.call('r', 'create_ticket', { summary: 's' }, { stepIdx: 0 });
    expect(outcome.status === 'CONFIRMED' && outcome.result).toEqual({ text });
  });

  it('resolves PURE, FAILED, INTENDED, AWAITING_APPROVAL and REJECTED as outcomes the agent sees', async () => {
    const { client } = await clientAnswering(
      { status: 200, body: { status: 'PURE', result: [1, 2] } },
      {
        status: 200,
        body: {
          status: 'FAILED',
          stepIdx: 1,
          idempotencyKey: 'k1',
          error: { message: 'card declined' },
          replayed: false,
        },
      },
      { status: 202, body: { status: 'INTENDED', stepIdx: 2, idempotencyKey: 'k2' } },
      { status: 202, body: { status: 'AWAITING_APPROVAL', stepIdx: 3, idempotencyKey: 'k3' } },
      {
        status: 200,
        body: { status: 'REJECTED', stepIdx: 4, idempotencyKey: 'k4', message: 'a person said no' },
      },
    );
    await expect(client.call('r', 'search', {}, { stepIdx: 0 })).resolves.toEqual({
      status: 'PURE',
      result: [1, 2],
    });
    await expect(client.call('r', 'charge_card', {}, { stepIdx: 1 })).resolves.toEqual({
      status: 'FAILED',
      stepIdx: 1,
      idempotencyKey: 'k1',
      error: { message: 'card declined' },
      replayed: false,
    });
    await expect(client.call('r', 'charge_card', {}, { stepIdx: 2 })).resolves.toMatchObject({
      status: 'INTENDED',
      stepIdx: 2,
    });
    await expect(client.call('r', 'send_email', {}, { stepIdx: 3 })).resolves.toMatchObject({
      status: 'AWAITING_APPROVAL',
      stepIdx: 3,
    });
    await expect(client.call('r', 'send_email', {}, { stepIdx: 4 })).resolves.toEqual({
      status: 'REJECTED',
      stepIdx: 4,
      idempotencyKey: 'k4',
      message: 'a person said no',
    });
  });

  it('throws ToolOutcomeUnknown for UNKNOWN, with the step, its key and the model-facing message', async () => {
    const message = 'The outcome is unknown; do not retry with new arguments, the harness will resolve it.';
    const { client } = await clientAnswering({
      status: 200,
      body: { status: 'UNKNOWN', stepIdx: 4, idempotencyKey: 'k4', message },
    });
    const err = await rejectionOf(client.call('r', 'charge_card', {}, { stepIdx: 4 }));
    expect(err).toBeInstanceOf(ToolOutcomeUnknown);
    expect(err).toBeInstanceOf(SagaApiError);
    expect(err).toMatchObject({ stepIdx: 4, idempotencyKey: 'k4', message, code: 'OUTCOME_UNKNOWN' });
  });

  it('refuses a bad stepIdx or waitMs before sending anything', async () => {
    const { client, server } = await clientAnswering();
    await expect(client.call('r', 't', {}, { stepIdx: -1 })).rejects.toBeInstanceOf(RangeError);
    await expect(client.call('r', 't', {}, { stepIdx: 1.5 })).rejects.toBeInstanceOf(RangeError);
    await expect(client.call('r', 't', {}, { stepIdx: 0, waitMs: 60_001 })).rejects.toBeInstanceOf(
      RangeError,
    );
    expect(server.requests).toHaveLength(0);
  });
});

describe('dispatcher refusals become typed errors', () => {
  it('400 INVALID_ARGS names the field; UNKNOWN_TOOL and BAD_REQUEST are the same family', async () => {
    const { client } = await clientAnswering(
      apiError(400, 'INVALID_ARGS', { field: 'orderId' }),
      apiError(400, 'UNKNOWN_TOOL'),
    );
    const err = await rejectionOf(client.call('r', 'create_ticket', {}, { stepIdx: 0 }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ code: 'INVALID_ARGS', status: 400, field: 'orderId' });
    await expect(client.call('r', 'nope', {}, { stepIdx: 0 })).rejects.toMatchObject({
      name: 'InvalidRequestError',
      code: 'UNKNOWN_TOOL',
    });
  });

  it('another 4xx in the error shape (a pure tool refusing, 422) is a refusal too', async () => {
    const { client } = await clientAnswering(apiError(422, 'CLIENT_ERROR', { details: { status: 403 } }));
    await expect(client.call('r', 'search', {}, { stepIdx: 0 })).rejects.toMatchObject({
      name: 'InvalidRequestError',
      code: 'CLIENT_ERROR',
      status: 422,
      details: { details: { status: 403 } },
    });
  });

  it('401 is UnauthorizedError and 404 is NotFoundError', async () => {
    const { client } = await clientAnswering(apiError(401, 'UNAUTHORIZED'), apiError(404, 'NOT_FOUND'));
    await expect(client.getRun('r')).rejects.toBeInstanceOf(UnauthorizedError);
    const err = await rejectionOf(client.getRun('someone-elses'));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('409s carry their code, the mismatching fields, a settled outcome and other details', async () => {
    const settled = {
      status: 'CONFIRMED',
      stepIdx: 1,
      idempotencyKey: 'k1',
      externalRef: 'SUP-1',
      result: {},
      replayed: true,
      tool: 'create_ticket',
    };
    const { client } = await clientAnswering(
      apiError(409, 'IDEMPOTENCY_MISMATCH', { fields: ['orderId'] }),
      apiError(409, 'STEP_UNRESOLVED', { outcome: settled }),
      apiError(409, 'STEP_CONFLICT', { existingTool: 'charge_card' }),
      apiError(409, 'RUN_NOT_RUNNING'),
    );
    const mismatch = await rejectionOf(client.call('r', 't', {}, { stepIdx: 1 }));
    expect(mismatch).toBeInstanceOf(ConflictError);
    expect(mismatch).toMatchObject({ code: 'IDEMPOTENCY_MISMATCH', status: 409, fields: ['orderId'] });
    await expect(client.call('r', 't', {}, { stepIdx: 2 })).rejects.toMatchObject({
      code: 'STEP_UNRESOLVED',
      outcome: settled,
    });
    await expect(client.call('r', 't', {}, { stepIdx: 1 })).rejects.toMatchObject({
      code: 'STEP_CONFLICT',
      details: { existingTool: 'charge_card' },
    });
    await expect(client.call('r', 't', {}, { stepIdx: 2 })).rejects.toMatchObject({
      code: 'RUN_NOT_RUNNING',
    });
  });

  it("a code gets its own class only with the dispatcher's status for it, else its status's family", async () => {
    const { client } = await clientAnswering(
      apiError(410, 'APPROVAL_EXPIRED'),
      apiError(409, 'APPROVAL_EXPIRED'),
      apiError(502, 'CORRECTION_OUTCOME_UNKNOWN'),
    );
    const decide = () => client.decideApproval('a1', { decision: 'approve', hash: 'h' });
    const expired = await rejectionOf(decide());
    expect(expired).toBeInstanceOf(ApprovalExpiredError);
    expect(expired).toBeInstanceOf(InvalidRequestError);
    const odd = await rejectionOf(decide());
    expect(odd).toBeInstanceOf(ConflictError);
    expect(odd).not.toBeInstanceOf(ApprovalExpiredError);
    const unsent = await rejectionOf(client.sendCorrection('7', { hash: 'h' }));
    expect(unsent).toBeInstanceOf(CorrectionOutcomeUnknownError);
    expect(unsent).toBeInstanceOf(ServiceUnavailableError);
    expect(unsent).toMatchObject({ code: 'CORRECTION_OUTCOME_UNKNOWN', status: 502 });
  });

  it('list filters travel as query parameters, absent ones not at all; ids are path-encoded', async () => {
    const { client, server } = await clientAnswering(
      { status: 200, body: { approvals: [] } },
      { status: 200, body: { cases: [] } },
      { status: 200, body: { runs: [] } },
    );
    await client.listApprovals({ status: 'pending', runId: 'order:42', limit: 5 });
    await client.listCases();
    await client.listRuns({ status: 'RUNNING' });
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/approvals?status=pending&runId=order%3A42&limit=5',
      '/v1/cases',
      '/v1/runs?status=RUNNING',
    ]);
  });
});

describe('answers that are not the dispatcher wire format are clear errors', () => {
  it('a 200 call answer missing fields names them', async () => {
    const { client } = await clientAnswering({ status: 200, body: { status: 'CONFIRMED', stepIdx: 0 } });
    const err = await rejectionOf(client.call('r', 't', {}, { stepIdx: 0 }));
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as Error).message).toContain('POST /v1/runs/r/calls');
    expect((err as Error).message).toContain('idempotencyKey');
  });

  it('an unknown call status, a non-JSON body, and an error body without a code', async () => {
    const { client } = await clientAnswering(
      { status: 200, body: { status: 'MAYBE', stepIdx: 0, idempotencyKey: 'k' } },
      { status: 200, raw: '<html>ok</html>' },
      { status: 409, body: { message: 'conflict' } },
    );
    await expect(client.call('r', 't', {}, { stepIdx: 0 })).rejects.toBeInstanceOf(UnexpectedResponseError);
    await expect(client.getRun('r')).rejects.toThrow(/not JSON/);
    await expect(client.getRun('r')).rejects.toBeInstanceOf(UnexpectedResponseError);
  });

  it('a 5xx page and a dropped connection are ServiceUnavailableError', async () => {
    const { client } = await clientWith(
      { unavailableRetryMs: 0 },
      { status: 502, raw: '<h1>Bad gateway</h1>' },
      { hangUp: true },
    );
    await expect(client.call('r', 't', {}, { stepIdx: 0 })).rejects.toMatchObject({
      name: 'ServiceUnavailableError',
      status: 502,
    });
    await expect(client.call('r', 't', {}, { stepIdx: 0 })).rejects.toMatchObject({
      name: 'ServiceUnavailableError',
      status: null,
    });
  });

  it('a dispatcher that is not there is ServiceUnavailableError, once the repeats are spent', async () => {
    const { server } = await clientAnswering();
    await server.close();
    const client = createSagaClient({ baseUrl: server.url, token: TOKEN, unavailableRetryMs: 500 });
    const startedAt = Date.now();
    await expect(client.getRun('r')).rejects.toBeInstanceOf(ServiceUnavailableError);
    // Sent at 0, 100, 300 ms (pauses of 100 and 200 ms); the next pause (400 ms) would pass the 500 ms.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(300);
  });

  it('rejects a bad unavailableRetryMs naming it', () => {
    expect(() =>
      createSagaClient({ baseUrl: 'http://127.0.0.1:1', token: TOKEN, unavailableRetryMs: -1 }),
    ).toThrow(/unavailableRetryMs/);
  });
});

describe('no answer: a call or a read is sent again, nothing else is', () => {
  it('a call reset and then answered by a proxy page is sent again at its stepIdx until it is answered', async () => {
    const { client, server } = await clientAnswering(
      { hangUp: true },
      { status: 502, raw: '<h1>Bad gateway</h1>' },
      confirmed(0),
    );
    await expect(client.call('r', 'create_ticket', { n: 1 }, { stepIdx: 0 })).resolves.toMatchObject({
      status: 'CONFIRMED',
      stepIdx: 0,
    });
    expect(server.requests.map((r) => [r.url, (r.body as { stepIdx: number }).stepIdx])).toEqual([
      ['/v1/runs/r/calls', 0],
      ['/v1/runs/r/calls', 0],
      ['/v1/runs/r/calls', 0],
    ]);
  });

  it('an answer the dispatcher decided (409, 500 INTERNAL) is not sent again', async () => {
    const { client, server } = await clientAnswering(
      apiError(500, 'INTERNAL'),
      apiError(409, 'STEP_CONFLICT'),
    );
    await expect(client.call('r', 't', {}, { stepIdx: 0 })).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(client.call('r', 't', {}, { stepIdx: 0 })).rejects.toBeInstanceOf(ConflictError);
    expect(server.requests).toHaveLength(2);
  });

  it('a run creation that got no answer is not sent again: its caller decides', async () => {
    const { client, server } = await clientAnswering({ hangUp: true });
    await expect(client.createRun({ runId: 'r' })).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(server.requests).toHaveLength(1);
  });
});

describe('getRun and getEvents', () => {
  const EVENT = {
    id: '17',
    stepIdx: 0,
    kind: 'transition',
    from: 'INTENDED',
    to: 'CONFIRMED',
    cause: 'executor',
    detail: null,
    at: '2026-01-01T00:00:00Z',
    leaseOwner: 'a field a newer dispatcher added',
  };

  it('read the run with its steps and the events, keeping fields this client does not know', async () => {
    const { client, server } = await clientAnswering(
      runView('r', [{ ...stepView(0, 'create_ticket', 'CONFIRMED'), dependsOn: null }]),
      {
        status: 200,
        body: { runId: 'r', events: [EVENT] },
      },
    );
    const run = await client.getRun('r');
    expect(run.steps[0]).toMatchObject({
      stepIdx: 0,
      tool: 'create_ticket',
      status: 'CONFIRMED',
      dependsOn: null,
    });
    const events = await client.getEvents('r');
    expect(events).toEqual([EVENT]);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1/runs/r',
      'GET /v1/runs/r/events?limit=1000',
    ]);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(server.requests[0]?.body).toBeUndefined();
  });

  it('follow the pages: steps by nextStepsCursor, events by nextCursor, each once', async () => {
    const page = (steps: number[], next: number | null) => ({
      status: 200,
      body: {
        runId: 'r',
        status: 'RUNNING',
        statusReason: null,
        cursor: 0,
        steps: steps.map((i) => stepView(i, 'create_ticket', 'CONFIRMED')),
        nextStepsCursor: next,
      },
    });
    const { client, server } = await clientAnswering(
      page([0, 1], 1),
      page([2], null),
      { status: 200, body: { runId: 'r', events: [EVENT], nextCursor: '7' } },
      { status: 200, body: { runId: 'r', events: [{ ...EVENT, id: '8' }], nextCursor: null } },
    );
    const run = await client.getRun('r');
    expect(run.steps.map((s) => s.stepIdx)).toEqual([0, 1, 2]);
    expect('nextStepsCursor' in run).toBe(false);
    const events = await client.getEvents('r');
    expect(events.map((e) => e.id)).toEqual([EVENT.id, '8']);
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/runs/r',
      '/v1/runs/r?stepsAfter=1',
      '/v1/runs/r/events?limit=1000',
      '/v1/runs/r/events?limit=1000&after=7',
    ]);
  });

  it('a waiting read sends waitMs and whileStatus (repeated) with its first page only', async () => {
    const page = (steps: number[], next: number | null) => ({
      status: 200,
      body: {
        runId: 'r w',
        status: 'COMPENSATING',
        statusReason: null,
        cursor: 0,
        steps: steps.map((i) => stepView(i, 'create_ticket', 'CONFIRMED')),
        nextStepsCursor: next,
      },
    });
    const { client, server } = await clientAnswering(page([0], 0), page([1], null), page([], null));
    const run = await client.getRun('r w', { waitMs: 20_000, whileStatus: ['RUNNING', 'AWAITING_APPROVAL'] });
    expect(run).toMatchObject({ status: 'COMPENSATING' });
    expect(run.steps.map((s) => s.stepIdx)).toEqual([0, 1]);
    // The default statuses are the dispatcher's: none is sent.
    await client.getRun('r w', { waitMs: 500 });
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/runs/r%20w?waitMs=20000&whileStatus=RUNNING&whileStatus=AWAITING_APPROVAL',
      '/v1/runs/r%20w?stepsAfter=0',
      '/v1/runs/r%20w?waitMs=500',
    ]);
  });

  it('getStep reads one step, waiting with waitMs; a bad index, waitMs or whileStatus is refused unsent', async () => {
    const { client, server } = await clientAnswering({
      status: 200,
      body: { ...stepView(3, 'create_ticket', 'CONFIRMED'), externalRef: 'SUP-3' },
    });
    const step = await client.getStep('r', 3, { waitMs: 15_000 });
    expect(step).toMatchObject({ stepIdx: 3, status: 'CONFIRMED', externalRef: 'SUP-3' });
    await expect(client.getStep('r', -1)).rejects.toThrow(/stepIdx/);
    await expect(client.getStep('r', 0, { waitMs: 60_001 })).rejects.toThrow(/waitMs/);
    await expect(client.getRun('r', { waitMs: 1.5 })).rejects.toThrow(/waitMs/);
    await expect(client.getRun('r', { whileStatus: [] })).rejects.toThrow(/whileStatus/);
    expect(server.requests.map((r) => r.url)).toEqual(['/v1/runs/r/steps/3?waitMs=15000']);
  });
});
