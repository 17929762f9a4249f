/**
 * The framework-free half of every agent integration: which tools a model gets, what it reads about each,
 * and one call through the run as a result it can act on, never a throw for what the harness answered.
 */
import { describe, expect, it } from 'vitest';
import {
  chooseTools,
  describeForModel,
  holdableByDefault,
  submissionResult,
  submitCall,
  CallStatus,
  ConflictError,
  UnauthorizedError,
  type RunHandle,
  type ToolView,
} from '../src/index.js';

const view = (name: string, over: Partial<ToolView> = {}): ToolView => ({
  name,
  description: null,
  class: 'compensatable',
  version: 1,
  inputSchema: { type: 'object' },
  identity: [],
  repeatable: false,
  audience: null,
  needsApproval: false,
  movesMoney: false,
  deletes: false,
  compensated: true,
  ...over,
});
const TOOLS = [
  view('get_order', { class: 'pure' }),
  view('charge_card', { movesMoney: true }),
  view('send_email'),
];

describe('chooseTools', () => {
  it('gives every tool, the named ones, or those a test picks', () => {
    expect(chooseTools({ tools: TOOLS }, 'x').map((t) => t.name)).toEqual([
      'get_order',
      'charge_card',
      'send_email',
    ]);
    expect(chooseTools({ tools: TOOLS, include: ['send_email'] }, 'x').map((t) => t.name)).toEqual([
      'send_email',
    ]);
    expect(chooseTools({ tools: TOOLS, include: (t) => t.class === 'pure' }, 'x').map((t) => t.name)).toEqual(
      ['get_order'],
    );
  });

  it('refuses a name the harness does not have, naming it and the caller', () => {
    expect(() => chooseTools({ tools: TOOLS, include: ['send_email', 'refund_all'] }, 'sagaTools')).toThrow(
      'sagaTools: include names tools the harness does not have: refund_all',
    );
  });
});

describe('what the model reads of a tool', () => {
  it("the tool's description, then what the harness does with its calls", () => {
    expect(describeForModel(view('get_order', { class: 'pure', description: 'Reads an order.' }))).toBe(
      'Reads an order. Read-only.',
    );
    expect(describeForModel(view('send_email', { class: 'irreversible' }))).toMatch(
      /^send_email Irreversible: agent-saga holds each call/,
    );
  });

  it('holds by default the tools that always wait for a person and those that move money', () => {
    expect(TOOLS.filter(holdableByDefault).map((t) => t.name)).toEqual(['charge_card']);
    expect(holdableByDefault(view('send_email', { needsApproval: true }))).toBe(true);
  });
});

describe('submitCall', () => {
  const runThat = (answer: () => Promise<unknown>): RunHandle & { calls: unknown[] } => {
    const calls: unknown[] = [];
    return {
      runId: 'r1',
      calls,
      call: (tool, args, options) => {
        calls.push({ tool, args, options });
        return answer() as never;
      },
      sync: () => Promise.resolve(),
      nextStepIdx: 0,
      openSteps: [],
    };
  };

  it('sends an object once, with the wait, and gives the outcome as the model reads it', async () => {
    const outcome = {
      status: CallStatus.CONFIRMED,
      stepIdx: 0,
      idempotencyKey: 'k',
      externalRef: 'ch_1',
      result: { id: 'ch_1' },
      replayed: false,
    };
    const run = runThat(() => Promise.resolve(outcome));
    const s = await submitCall(run, 'charge_card', { amount: 1 }, 2_000);
    expect(run.calls).toEqual([{ tool: 'charge_card', args: { amount: 1 }, options: { waitMs: 2_000 } }]);
    expect(submissionResult(s)).toMatchObject({ status: 'CONFIRMED', externalRef: 'ch_1' });
  });

  it('sends nothing for input that is not an object, and tells the model so', async () => {
    const run = runThat(() => Promise.reject(new Error('must not be called')));
    const s = await submitCall(run, 'charge_card', ['not', 'an', 'object'], undefined);
    expect(run.calls).toEqual([]);
    expect(submissionResult(s)).toMatchObject({ status: 'REFUSED', code: 'INVALID_ARGS' });
  });

  it("turns the harness's refusal into a result, and throws what only the app can fix", async () => {
    const refused = await submitCall(
      runThat(() =>
        Promise.reject(
          new ConflictError({ status: 409, code: 'DUPLICATE_OPERATION', message: 'already charged' }),
        ),
      ),
      'charge_card',
      {},
      undefined,
    );
    expect(submissionResult(refused)).toMatchObject({ status: 'REFUSED', code: 'DUPLICATE_OPERATION' });
    const unauthorized = await submitCall(
      runThat(() =>
        Promise.reject(new UnauthorizedError({ status: 401, code: 'UNAUTHORIZED', message: 'no' })),
      ),
      'charge_card',
      {},
      undefined,
    );
    expect(() => submissionResult(unauthorized)).toThrow(UnauthorizedError);
  });
});
