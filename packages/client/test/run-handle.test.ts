import { afterEach, describe, expect, it } from 'vitest';
import {
  ConflictError,
  createSagaClient,
  InvalidRequestError,
  ServiceUnavailableError,
  ToolOutcomeUnknown,
  type RunHandle,
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
  type RecordedRequest,
} from './fake-dispatcher.js';

let server: FakeDispatcher | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function handleAnswering(
  answer: (req: RecordedRequest) => Answer,
  options: { readonly unavailableRetryMs?: number } = {},
): Promise<RunHandle> {
  server = await startFakeDispatcher(answer);
  return createSagaClient({ baseUrl: server.url, token: 't', ...options }).run('r1');
}

/** The step indices the handle sent, in order, and which requests read the log. */
function sent(): (number | 'getRun')[] {
  return (server?.requests ?? []).map((r) =>
    r.method === 'GET' ? 'getRun' : (r.body as { stepIdx: number }).stepIdx,
  );
}

const unknown = (stepIdx: number): Answer => ({
  status: 200,
  body: {
    status: 'UNKNOWN',
    stepIdx,
    idempotencyKey: `key-${stepIdx}`,
    message: 'do not retry with new args',
  },
});

describe('a run handle counts the run steps itself', () => {
  it('starts from the log, sends stepIdx on every call, and does not count pure calls', async () => {
    const run = await handleAnswering(
      scripted(
        runView('r1', []),
        confirmed(0),
        { status: 200, body: { status: 'PURE', result: 1 } },
        confirmed(1),
      ),
    );
    expect(run.nextStepIdx).toBeUndefined();
    await run.call('create_ticket', { summary: 'a' });
    await run.call('search', {});
    await run.call('create_ticket', { summary: 'b' });
    expect(sent()).toEqual(['getRun', 0, 1, 1]);
    expect(run.nextStepIdx).toBe(2);
    expect(run.openSteps).toEqual([]);
  });

  it('on resume takes the next index from the log and retries an open step at its own index', async () => {
    const run = await handleAnswering(
      scripted(
        runView('r1', [
          stepView(0, 'create_ticket', 'CONFIRMED'),
          stepView(1, 'send_email', 'FAILED'),
          stepView(2, 'charge_card', 'UNKNOWN'),
        ]),
        confirmed(2, { replayed: true }),
        confirmed(3),
      ),
    );
    await run.call('charge_card', { amount: 10 });
    await run.call('send_email', {});
    expect(sent()).toEqual(['getRun', 2, 3]);
  });

  it('retries a call that threw ToolOutcomeUnknown at its index, then moves on once it settles', async () => {
    const run = await handleAnswering(scripted(runView('r1', []), unknown(0), confirmed(0), confirmed(1)));
    const err = await run.call('charge_card', { amount: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolOutcomeUnknown);
    expect(run.openSteps).toEqual([{ stepIdx: 0, tool: 'charge_card' }]);

    await expect(run.call('charge_card', { amount: 10 })).resolves.toMatchObject({ status: 'CONFIRMED' });
    await run.call('charge_card', { amount: 20 });
    expect(sent()).toEqual(['getRun', 0, 0, 1]);
  });

  it('sends another tool past an open step, where the dispatcher decides whether it may run', async () => {
    const run = await handleAnswering(
      scripted(runView('r1', []), unknown(0), apiError(409, 'STEP_UNRESOLVED'), confirmed(1)),
    );
    await expect(run.call('charge_card', {})).rejects.toBeInstanceOf(ToolOutcomeUnknown);
    await expect(run.call('send_email', {})).rejects.toBeInstanceOf(ConflictError);
    // The refused index was given back: the next new step takes it.
    await run.call('send_email', {});
    expect(sent()).toEqual(['getRun', 0, 1, 1]);
    expect(run.openSteps).toEqual([{ stepIdx: 0, tool: 'charge_card' }]);
  });

  it('closes an open step when a STEP_UNRESOLVED refusal carries its settled outcome', async () => {
    const settled = confirmed(0, { replayed: true });
    const settledBody = 'body' in settled ? settled.body : undefined;
    const run = await handleAnswering(
      scripted(runView('r1', []), unknown(0), apiError(409, 'STEP_UNRESOLVED', { outcome: settledBody })),
    );
    await expect(run.call('charge_card', {})).rejects.toBeInstanceOf(ToolOutcomeUnknown);
    await expect(run.call('send_email', {})).rejects.toMatchObject({ code: 'STEP_UNRESOLVED' });
    expect(run.openSteps).toEqual([]);
    expect(run.nextStepIdx).toBe(1);
  });

  it('keeps a 202 step open, so the same tool asks for its outcome instead of acting twice', async () => {
    const run = await handleAnswering(
      scripted(
        runView('r1', []),
        { status: 202, body: { status: 'INTENDED', stepIdx: 0, idempotencyKey: 'key-0' } },
        confirmed(0),
      ),
    );
    await expect(run.call('create_ticket', {})).resolves.toMatchObject({ status: 'INTENDED' });
    await expect(run.call('create_ticket', {})).resolves.toMatchObject({ status: 'CONFIRMED' });
    expect(sent()).toEqual(['getRun', 0, 0]);
  });

  it('retries at the same index after a dropped connection (the call may have been recorded)', async () => {
    const run = await handleAnswering(scripted(runView('r1', []), { hangUp: true }, confirmed(0)), {
      unavailableRetryMs: 0,
    });
    await expect(run.call('charge_card', {})).rejects.toBeInstanceOf(ServiceUnavailableError);
    await run.call('charge_card', {});
    expect(sent()).toEqual(['getRun', 0, 0]);
  });

  it('by default the client itself sends a reset call and a reset log read again: no error reaches the agent', async () => {
    const run = await handleAnswering(
      scripted({ hangUp: true }, runView('r1', []), { hangUp: true }, confirmed(0)),
    );
    await expect(run.call('charge_card', {})).resolves.toMatchObject({ status: 'CONFIRMED', stepIdx: 0 });
    expect(sent()).toEqual(['getRun', 'getRun', 0, 0]);
    expect(run.openSteps).toEqual([]);
  });

  it('gives back the index of a call the dispatcher refused with 400', async () => {
    const run = await handleAnswering(
      scripted(runView('r1', []), apiError(400, 'INVALID_ARGS', { field: 'amount' }), confirmed(0)),
    );
    await expect(run.call('charge_card', {})).rejects.toBeInstanceOf(InvalidRequestError);
    await run.call('charge_card', { amount: 1 });
    expect(sent()).toEqual(['getRun', 0, 0]);
  });

  it('re-reads the log after a STEP_CONFLICT (another writer took the index)', async () => {
    const run = await handleAnswering(
      scripted(
        runView('r1', []),
        apiError(409, 'STEP_CONFLICT'),
        runView('r1', [stepView(0, 'other_tool', 'CONFIRMED')]),
        confirmed(1),
      ),
    );
    await expect(run.call('charge_card', {})).rejects.toMatchObject({ code: 'STEP_CONFLICT' });
    await run.call('charge_card', {});
    expect(sent()).toEqual(['getRun', 0, 'getRun', 1]);
  });

  it('gives concurrent calls of one model turn their own indices', async () => {
    const run = await handleAnswering((req) =>
      req.method === 'GET' ? runView('r1', []) : confirmed((req.body as { stepIdx: number }).stepIdx),
    );
    const outcomes = await Promise.all([
      run.call('create_ticket', {}),
      run.call('create_ticket', {}),
      run.call('send_email', {}),
    ]);
    expect(outcomes.map((o) => ('stepIdx' in o ? o.stepIdx : null)).sort()).toEqual([0, 1, 2]);
    expect(sent().filter((s) => s === 'getRun')).toHaveLength(1);
    expect(run.nextStepIdx).toBe(3);
  });
});
