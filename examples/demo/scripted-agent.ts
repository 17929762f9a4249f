/**
 * The scripted agent: the mission's opening incident played through the harness with no model. It does
 * what a model does — retries an unknown with reworded arguments, is replaced after a crash by a fresh
 * agent that knows only the run id — and what an operator does at the end: asks the harness to unwind.
 *
 *  1. the run is created bound to the built-in definition `refund_and_reship`; get_order (pure);
 *  2. create_ticket: Jira creates the ticket, then its gateway answers 504 → UNKNOWN;
 *  3. the agent retries with reworded arguments until the harness resolves the step by its key;
 *  4. charge_card: Stripe charges, and the executor is SIGKILLed before it records the outcome;
 *  5. a fresh agent resumes from GET /v1/runs/{id} (not from a transcript) and retries the open step (or,
 *     when the reconciler settled it first by asking Stripe by its key, reads its outcome from the log);
 *  6. reship: the warehouse refuses (order 1182 is not eligible) → FAILED;
 *  7. the agent asks to unwind; the demo waits until the run is terminal.
 */
import { ToolOutcomeUnknown, type CallOutcome, type RunView, type SagaClient } from '@agent-saga/client';
import type { Harness } from './harness-processes.js';
import { act, answer, aside } from './narration.js';
import type { RunningSandbox } from './sandbox-admin.js';
import { waitFor } from './wait-for.js';

export const RUN_ID = 'order-1182';
const CHARGE = { customerId: 'cus_sandbox_ada', amount: 4900, currency: 'eur', reason: 'Refund order 1182' };
const UNWIND_REASON = 'warehouse refused the reship of order 1182; undo the refund workflow';
/** Run statuses in which the run is still moving. */
const MOVING = ['RUNNING', 'COMPENSATING'];

export interface ScriptedAgentDeps {
  readonly saga: SagaClient;
  readonly baseUrl: string;
  readonly token: string;
  readonly sandbox: RunningSandbox;
  readonly harness: Harness;
}

/** One line for an outcome, as the demo prints it under an act. */
export const describeOutcome = (o: CallOutcome): string =>
  o.status === 'CONFIRMED'
    ? `CONFIRMED ${o.externalRef ?? ''} (step ${o.stepIdx}, replayed=${String(o.replayed)}, key ${o.idempotencyKey})`
    : o.status === 'FAILED'
      ? `FAILED (step ${o.stepIdx}): ${JSON.stringify(o.error)}`
      : o.status;

/** What a patient model does with "unknown" or "still running": calls again, a little later. */
export async function retryUntilSettled(
  call: (attempt: number) => Promise<CallOutcome>,
  attempts = 60,
): Promise<CallOutcome> {
  for (let i = 1; ; i++) {
    try {
      const outcome = await call(i);
      if (outcome.status !== 'INTENDED' || i >= attempts) return outcome;
      aside(`attempt ${i}: INTENDED (still running); the model waits and calls again`);
    } catch (e) {
      if (!(e instanceof ToolOutcomeUnknown) || i >= attempts) throw e;
      aside(`attempt ${i}: UNKNOWN; the model waits and calls again`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Plays the story; returns the run as the log tells it once it is terminal. */
export async function playScriptedAgent(d: ScriptedAgentDeps): Promise<RunView> {
  const { saga, sandbox, harness } = d;
  act(0, `POST /v1/runs { runId: "${RUN_ID}", definition: { name: "refund_and_reship" } }`);
  const created = await saga.createRun({
    runId: RUN_ID,
    definition: { name: 'refund_and_reship' },
    goal: 'Refund and reship order 1182 (a damaged mug)',
    actor: 'demo-support-agent',
    metadata: { customer: 'cus_sandbox_ada', order: '1182' },
  });
  answer(`${created.created ? 201 : 200} ${created.status}`);
  // The first agent: its handle counts the run's steps, as an agent loop would.
  const agent = saga.run(RUN_ID);

  act(1, 'get_order (pure): answered at once, no log row');
  const order = await agent.call('get_order', { orderId: '1182' });
  answer(`${order.status} ${'result' in order ? JSON.stringify(order.result) : ''}`);

  act(2, 'create_ticket: Jira creates the ticket, then its gateway answers 504');
  await sandbox.addFault({
    vendor: 'jira',
    method: 'POST',
    path: '/rest/api/3/issue',
    nth: 1,
    kind: 'error_after',
  });
  try {
    answer(
      describeOutcome(
        await agent.call('create_ticket', { summary: 'Refund for order #1182', orderId: '1182' }),
      ),
    );
  } catch (e) {
    if (!(e instanceof ToolOutcomeUnknown)) throw e;
    answer(`UNKNOWN (step ${e.stepIdx}, key ${e.idempotencyKey})`);
    aside(`told to the model: "${e.message}"`);
  }

  act(3, "the model retries with reworded arguments ('Order #1182 refund')");
  const ticket = await retryUntilSettled(() =>
    agent.call('create_ticket', { summary: 'Order #1182 refund', orderId: '1182' }, { waitMs: 2_000 }),
  );
  answer(describeOutcome(ticket));

  act(4, 'charge_card: Stripe charges the card; the executor is SIGKILLed before it records');
  const [healthy] = harness.executors;
  await healthy?.stop();
  const crashing = harness.startExecutor({ SAGA_CRASH_POINTS: 'after-tool-before-record' });
  crashing.expectExit();
  const charge = await agent.call('charge_card', CHARGE, { waitMs: 3_000 }).catch((e: unknown) => e);
  answer(
    charge instanceof Error ? `${charge.name}: ${charge.message}` : describeOutcome(charge as CallOutcome),
  );
  const exit = await Promise.race([
    crashing.exited,
    new Promise<undefined>((r) => setTimeout(r, 30_000, undefined)),
  ]);
  if (exit?.signal !== 'SIGKILL')
    throw new Error(`the crashing executor did not die at its crash point (exit: ${JSON.stringify(exit)})`);
  aside(`${crashing.name} killed by ${exit.signal} after Stripe answered, before the outcome was recorded`);
  harness.startExecutor();
  aside('a healthy executor is started again; the first agent is gone with its transcript');

  act(5, 'a fresh agent resumes from GET /v1/runs/{id}, knowing only the run id');
  const resumed = saga.run(RUN_ID);
  await resumed.sync();
  answer(
    `open steps from the log: ${JSON.stringify(resumed.openSteps)}; next new step ${String(resumed.nextStepIdx)}`,
  );
  if (resumed.openSteps.some((s) => s.tool === 'charge_card')) {
    const charged = await retryUntilSettled(() => resumed.call('charge_card', CHARGE, { waitMs: 2_000 }));
    answer(describeOutcome(charged));
  } else {
    // On a busy machine the reconciler may settle the step (asking Stripe by its key) before the fresh
    // agent looks: the log then holds the charge as settled, and calling charge_card as a new step would be
    // refused (DUPLICATE_OPERATION). The agent reads the outcome from the log instead.
    const step = (await saga.getRun(RUN_ID)).steps.find((s) => s.tool === 'charge_card');
    if (!step) throw new Error('the log holds no charge_card step after the charge was sent');
    answer(
      `charge_card already settled in the log: ${step.status} ${step.externalRef ?? ''} (step ${step.stepIdx}, key ${step.idempotencyKey}); not called again`,
    );
  }

  act(6, 'reship: the warehouse refuses (order 1182 is not eligible)');
  // Like every step before it, the agent waits for the outcome before it acts on it: a step still INTENDED
  // when the unwind starts would be withdrawn unsent (NOT_EXECUTED), not refused by the warehouse.
  const reship = await retryUntilSettled(() =>
    resumed.call(
      'reship',
      { orderId: '1182', items: [{ sku: 'MUG-BLUE', quantity: 1 }], reason: 'Replacement for a damaged mug' },
      { waitMs: 2_000 },
    ),
  );
  answer(describeOutcome(reship));

  act(7, 'the agent asks the harness to unwind the run');
  const unwinding = await saga.unwind(RUN_ID, UNWIND_REASON);
  answer(`POST /v1/runs/${RUN_ID}/unwind → 202 ${JSON.stringify(unwinding)}`);
  const run = await waitFor(
    'the run to reach a terminal status',
    async () => {
      const r = await saga.getRun(RUN_ID);
      return MOVING.includes(r.status) ? undefined : r;
    },
    40_000,
    250,
  );
  answer(`${run.status}: ${run.statusReason ?? ''}`);
  return run;
}
