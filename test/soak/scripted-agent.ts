/**
 * One scripted agent (no model) playing the refund-and-reship story for one order of its own, over HTTP:
 * get_order (pure), create_ticket (step 0), charge_card (step 1), reship (step 2); then
 * `POST /v1/runs/{id}/complete` when the warehouse shipped, or `POST /v1/runs/{id}/unwind` when it refused.
 *
 * Two tempers, as models behave:
 * - **patient**: calls a step until the dispatcher has answered for it once (a network error or a 5xx may
 *   have lost a call that was never written, so it reads the run before calling again), then only reads the
 *   run (`GET /v1/runs/{id}`) until the step settles. An intent that nobody re-publishes is never settled
 *   for this agent: it is how a stranded intent shows.
 * - **eager**: calls the same step (same `stepIdx`) again every few seconds, rewording the arguments that
 *   are not the tool's identity, until it gets an outcome.
 *
 * Both go on through api restarts (connection refused, 5xx) until their deadline; the soak's checks, not
 * the agent, judge the outcome. A step that needs a person (MANUAL_INTERVENTION) ends the agent's script.
 */
import {
  ApiErrorCode,
  ConflictError,
  SagaApiError,
  ServiceUnavailableError,
  ToolOutcomeUnknown,
  UnexpectedResponseError,
  type RunView,
  type SagaClient,
} from '@agent-saga/client';
import { sleep, type Random } from './seeded-random.js';

export type AgentTemper = 'patient' | 'eager';

export interface AgentPlan {
  readonly runId: string;
  readonly orderId: string;
  readonly sku: string;
  /** The warehouse refuses this order's reship: the run must end COMPENSATED. */
  readonly refused: boolean;
  readonly temper: AgentTemper;
  /** When to start, in ms after the first agent. */
  readonly startAtMs: number;
}

export interface AgentResult {
  readonly plan: AgentPlan;
  /** What the agent last asked for: `complete`, `unwind`, or where it stopped. */
  readonly ending: 'completed' | 'unwound' | 'gave up';
  readonly notes: readonly string[];
  /** Calls to the dispatcher, and of those answered by no dispatcher (refused connection, 5xx). */
  readonly requests: number;
  readonly unavailable: number;
}

/** The settled step statuses; MANUAL_INTERVENTION also ends the agent's wait. */
const SETTLED = new Set(['CONFIRMED', 'FAILED', 'REJECTED']);
/** Why 2 s: a call waits this long for its outcome, then answers 202 INTENDED (well under the 10 s default). */
const WAIT_MS = 2_000;
/** Why 1 s: a patient agent reads its run about as often as a model loop would poll a tool's status. */
const READ_EVERY_MS = 1_000;

/** A dispatcher that did not answer, or answered like a failing one: worth trying again later. */
function isTransient(e: unknown): boolean {
  return (
    e instanceof ServiceUnavailableError ||
    e instanceof UnexpectedResponseError ||
    (e instanceof SagaApiError && (e.code === ApiErrorCode.INTERNAL || (e.status ?? 0) >= 500))
  );
}

interface Step {
  readonly idx: number;
  readonly tool: string;
  /** The arguments of the `attempt`-th call (1-based): the identity stays, the wording changes. */
  args(attempt: number): Record<string, unknown>;
}

function stepsOf(plan: AgentPlan): readonly Step[] {
  const { orderId, sku } = plan;
  const wording = ['', ' (again)', ', please', ' — retry', ' asap'];
  const w = (attempt: number) => wording[(attempt - 1) % wording.length] ?? '';
  return [
    {
      idx: 0,
      tool: 'create_ticket',
      args: (a) => ({ summary: `Refund for order #${orderId}${w(a)}`, orderId }),
    },
    {
      idx: 1,
      tool: 'charge_card',
      args: (a) => ({
        customerId: 'cus_sandbox_ada',
        amount: 4900,
        currency: 'eur',
        reason: `Refund order ${orderId}${w(a)}`,
      }),
    },
    {
      idx: 2,
      tool: 'reship',
      args: (a) => ({
        orderId,
        items: [{ sku, quantity: 1 }],
        reason: `Replacement for order ${orderId}${w(a)}`,
      }),
    },
  ];
}

/** Plays one run to its last request, or until `isOver()` (the soak's deadline, or its stop). Never throws. */
export async function playAgent(
  saga: SagaClient,
  plan: AgentPlan,
  isOver: () => boolean,
  random: Random,
): Promise<AgentResult> {
  const notes: string[] = [];
  let requests = 0;
  let unavailable = 0;
  const result = (ending: AgentResult['ending']): AgentResult => ({
    plan,
    ending,
    notes,
    requests,
    unavailable,
  });
  const expired = isOver;

  /** Sends `request` until it answers or fails for good; transient failures are retried after `pauseMs`. */
  async function persist<T>(
    what: string,
    request: () => Promise<T>,
    pauseMs = 1_000,
  ): Promise<T | undefined> {
    for (;;) {
      requests += 1;
      try {
        return await request();
      } catch (e) {
        if (!isTransient(e)) throw e;
        unavailable += 1;
        if (expired()) {
          notes.push(`${what}: no answer before the deadline (${String(e)})`);
          return undefined;
        }
        await sleep(pauseMs);
      }
    }
  }

  try {
    const created = await persist('create run', () =>
      saga.createRun({ runId: plan.runId, metadata: { order: plan.orderId, temper: plan.temper } }),
    );
    if (!created) return result('gave up');
    const order = await persist('get_order', () =>
      saga.call(plan.runId, 'get_order', { orderId: plan.orderId }, { stepIdx: 0 }),
    );
    if (!order) return result('gave up');

    for (const step of stepsOf(plan)) {
      const status = plan.temper === 'eager' ? await settleEagerly(step) : await settlePatiently(step);
      if (status === undefined) return result('gave up');
      if (status === 'MANUAL_INTERVENTION') {
        notes.push(`${step.tool} (step ${step.idx}) needs a person: MANUAL_INTERVENTION`);
        return result('gave up');
      }
      if (status !== 'CONFIRMED') {
        if (!(step.tool === 'reship' && status === 'FAILED'))
          notes.push(`${step.tool} (step ${step.idx}) ended ${status}; the agent unwinds`);
        return (await unwind(`${step.tool} ${status}`)) ? result('unwound') : result('gave up');
      }
    }
    return (await complete()) ? result('completed') : result('gave up');
  } catch (e) {
    notes.push(
      `refused: ${e instanceof SagaApiError ? `${e.code} (HTTP ${e.status}) ${e.message}` : String(e)}`,
    );
    return result('gave up');
  }

  async function readRun(): Promise<RunView | undefined> {
    return persist('read the run', () => saga.getRun(plan.runId));
  }

  /** Calls, then reads; resolves with the step's settled status, or undefined at the deadline. */
  async function settlePatiently(step: Step): Promise<string | undefined> {
    let answered = false;
    while (!expired()) {
      if (!answered) {
        requests += 1;
        try {
          const outcome = await saga.call(plan.runId, step.tool, step.args(1), {
            stepIdx: step.idx,
            waitMs: WAIT_MS,
          });
          if (SETTLED.has(outcome.status)) return outcome.status;
          answered = true;
        } catch (e) {
          if (e instanceof ToolOutcomeUnknown) answered = true;
          else if (!isTransient(e)) throw e;
          else {
            unavailable += 1;
            // The call may have been written before the answer was lost: the log says.
            const run = await readRun();
            answered = run?.steps.some((s) => s.stepIdx === step.idx) ?? false;
            if (!answered) await sleep(READ_EVERY_MS);
          }
        }
        continue;
      }
      await sleep(READ_EVERY_MS);
      const run = await readRun();
      const s = run?.steps.find((x) => x.stepIdx === step.idx);
      if (s && (SETTLED.has(s.status) || s.status === 'MANUAL_INTERVENTION')) return s.status;
    }
    notes.push(`${step.tool} (step ${step.idx}): not settled before the deadline (patient agent)`);
    return undefined;
  }

  /** Calls again every few seconds, reworded, until the call answers with an outcome. */
  async function settleEagerly(step: Step): Promise<string | undefined> {
    for (let attempt = 1; !expired(); attempt++) {
      requests += 1;
      try {
        const outcome = await saga.call(plan.runId, step.tool, step.args(attempt), {
          stepIdx: step.idx,
          waitMs: WAIT_MS,
        });
        if (SETTLED.has(outcome.status)) return outcome.status;
      } catch (e) {
        if (e instanceof ToolOutcomeUnknown) {
          // Answered as UNKNOWN until a person settles it: the log says whether one must.
          if (attempt % 10 === 0) {
            const s = (await readRun())?.steps.find((x) => x.stepIdx === step.idx);
            if (s?.status === 'MANUAL_INTERVENTION') return s.status;
          }
        } else if (isTransient(e)) unavailable += 1;
        else throw e;
      }
      // Why 2–4 s: "every few seconds", jittered so a hundred agents do not call in lockstep.
      await sleep(random.int(2_000, 4_000));
    }
    notes.push(`${step.tool} (step ${step.idx}): not settled before the deadline (eager agent)`);
    return undefined;
  }

  /** `complete`, until it is answered; a lost answer is checked against the log. */
  async function complete(): Promise<boolean> {
    while (!expired()) {
      try {
        const done = await persist('complete', () => saga.complete(plan.runId));
        if (done) return true;
      } catch (e) {
        if (!(e instanceof ConflictError)) throw e;
        const run = await readRun();
        if (run?.status === 'COMPLETED') return true;
        if (e.code !== ApiErrorCode.STEP_UNRESOLVED) throw e;
        await sleep(READ_EVERY_MS);
      }
    }
    notes.push('complete: not accepted before the deadline');
    return false;
  }

  /** `unwind` with a reason, until it is answered; a run already unwinding or unwound is fine. */
  async function unwind(why: string): Promise<boolean> {
    const reason = `warehouse refused the reship of order ${plan.orderId} (${why}); undo the refund workflow`;
    try {
      return (await persist('unwind', () => saga.unwind(plan.runId, reason))) !== undefined;
    } catch (e) {
      if (!(e instanceof ConflictError)) throw e;
      const run = await readRun();
      if (run && run.status !== 'RUNNING') return true;
      throw e;
    }
  }
}
