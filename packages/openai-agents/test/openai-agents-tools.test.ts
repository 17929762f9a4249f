/**
 * `sagaAgentTools` in a real Agents SDK `run(agent, input)` loop, driven by a scripted model provider on
 * the SDK's own `Model`/`ModelProvider` interfaces, against the running product: the dispatcher's api,
 * relay and executor and the reconciler as child processes on the real connectors, the vendor sandbox in
 * process (started once for the file). What is checked is what a user would: what the model was shown,
 * the run's log, and the sandbox's ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, Runner, RunState } from '@openai/agents';
import { createSagaClient, type SagaClient, type ToolView } from '@agent-saga/client';
import { createSagaAgentApprovals, loadSagaAgentTools, sagaAgentTools } from '../src/index.js';
import { CHARGE_AMOUNT, runLedger } from '../../../test/fixtures/support-flow.js';
import { type SupportHarness } from '../../../test/fixtures/support-harness.js';
import { CHARGE, EMAIL, patient, startAgentTestHarness } from '../../../test/fixtures/scripted-agent.js';
import { scriptedModel, type Script } from './scripted-model.js';

let h: SupportHarness;
let tools: readonly ToolView[];
let operator: SagaClient;
beforeAll(async () => {
  ({ h, tools, operator } = await startAgentTestHarness('openai_agents'));
}, 90_000);
afterAll(async () => h?.close());

/** An agent with the run's tools, and a runner whose only model is the script (tracing off: no network). */
function agentFor(
  runId: string,
  script: Script,
  extra: { approvals?: ReturnType<typeof createSagaAgentApprovals> } = {},
  thinkMs = 0,
) {
  const scripted = scriptedModel(script, { thinkMs });
  const agent = new Agent({
    name: 'support',
    instructions: 'You are a support agent.',
    tools: sagaAgentTools(h.saga.run(runId), { tools, waitMs: 2_000, ...extra }),
  });
  const runner = new Runner({ modelProvider: scripted.provider, tracingDisabled: true });
  return { agent, runner, seen: scripted.seen };
}

async function waitUntil(probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function ledgerOf(runId: string) {
  return runLedger(h.sandbox.admin.ledger(), await h.saga.getRun(runId));
}

describe('sagaAgentTools in an Agents SDK run loop against the sandbox', () => {
  it('gives the model the tools the dispatcher lists, with its JSON Schema, non-strict, only those included', async () => {
    const list = await loadSagaAgentTools(h.saga, h.saga.run('oa-shape'), {
      include: ['charge_card', 'send_email'],
    });
    expect(list.map((t) => t.name).sort()).toEqual(['charge_card', 'send_email']);
    const charge = list.find((t) => t.name === 'charge_card')!;
    expect(charge.parameters).toEqual(tools.find((t) => t.name === 'charge_card')!.inputSchema);
    expect(charge.strict).toBe(false);
    expect(list.find((t) => t.name === 'send_email')!.description).toContain(
      'holds each call for a person’s approval',
    );
    expect(() => sagaAgentTools(h.saga.run('oa-shape'), { tools, include: ['no_such_tool'] })).toThrow(
      /no_such_tool/,
    );
  });

  it('returns a confirmed charge to the model; the ledger has one charge', async () => {
    const runId = 'oa-charge';
    await h.saga.createRun({ runId });
    const { agent, runner, seen } = agentFor(runId, patient({ call: 'charge_card', args: CHARGE }));
    const result = await runner.run(agent, 'Refund order 1182 to Ada.', { maxTurns: 5 });

    expect(result.finalOutput).toBe('done');
    expect(result.interruptions).toEqual([]);
    expect(seen).toHaveLength(1);
    const shown = seen[0]!.output as { status: string; externalRef: string };
    expect(shown).toMatchObject({ status: 'CONFIRMED', stepIdx: 0, replayed: false });
    expect(shown.externalRef).toMatch(/^pi_/);
    const ledger = await ledgerOf(runId);
    expect(ledger.charges).toEqual([
      expect.objectContaining({ id: shown.externalRef, amount: CHARGE_AMOUNT }),
    ]);
  }, 30_000);

  it('a lost answer is UNKNOWN to the model; its retry of the same call makes one charge', async () => {
    const runId = 'oa-lost-answer';
    await h.saga.createRun({ runId });
    h.sandbox.admin.addFault({
      vendor: 'stripe',
      method: 'POST',
      path: '/v1/payment_intents',
      nth: 1,
      kind: 'error_after',
    });
    // Why 250 ms: 20 turns then span 5 s, well past the lookup lag; the SDK stops a run at maxTurns.
    const { agent, runner, seen } = agentFor(runId, patient({ call: 'charge_card', args: CHARGE }), {}, 250);
    const result = await runner.run(agent, 'Refund order 1182 to Ada.', { maxTurns: 20 });

    const first = seen[0]!.output as { status: string; whatToDo: string };
    expect(first.status).toBe('UNKNOWN');
    expect(first.whatToDo).toContain('Call this tool again with the same arguments');
    expect(first.whatToDo).toContain('never acts twice');
    // The call that settles it may be the re-send under the same key (Stripe dedupes by key; a lookup that
    // does not see the charge yet sends it again: `replayed: false`) or a read of the log.
    const last = seen.at(-1)!.output as { externalRef: string };
    expect(last).toMatchObject({ status: 'CONFIRMED', stepIdx: 0 });
    expect(result.finalOutput).toBe('done');
    expect(seen.length).toBeGreaterThanOrEqual(2); // the model did call again

    const view = await h.saga.getRun(runId);
    expect(view.steps.map((s) => [s.tool, s.status])).toEqual([['charge_card', 'CONFIRMED']]);
    const ledger = runLedger(h.sandbox.admin.ledger(), view);
    expect(ledger.charges).toHaveLength(1);
    expect(ledger.charges[0]!.id).toBe(last.externalRef);
    // The same call once more is answered from the log.
    expect(await h.saga.call(runId, 'charge_card', CHARGE, { stepIdx: 0 })).toMatchObject({
      status: 'CONFIRMED',
      replayed: true,
      externalRef: last.externalRef,
    });
  }, 30_000);

  it('a replanned duplicate comes back as DUPLICATE_OPERATION naming the earlier ticket; Jira has one', async () => {
    const runId = 'oa-replanned';
    await h.saga.createRun({ runId });
    const script: Script = (_last, turn) =>
      turn === 0
        ? [{ call: 'create_ticket', args: { summary: 'Refund for order #1182', orderId: '1182' } }]
        : turn === 1
          ? [
              {
                call: 'create_ticket',
                args: { summary: 'Order 1182: customer wants a refund', orderId: '1182' },
              },
            ]
          : [{ say: 'done' }];
    const { agent, runner, seen } = agentFor(runId, script);
    await runner.run(agent, 'Open a ticket.', { maxTurns: 5 });

    expect(seen).toHaveLength(2);
    const ticket = seen[0]!.output as { status: string; externalRef: string };
    expect(ticket.status).toBe('CONFIRMED');
    expect(seen[1]!.output).toMatchObject({
      status: 'REFUSED',
      code: 'DUPLICATE_OPERATION',
      details: { stepIdx: 0, status: 'CONFIRMED', externalRef: ticket.externalRef },
    });
    expect((seen[1]!.output as { whatToDo: string }).whatToDo).toContain('do not do it again');
    const ledger = await ledgerOf(runId);
    expect(ledger.tickets.map((t) => t.key)).toEqual([ticket.externalRef]);
    expect((await h.saga.getRun(runId)).steps).toHaveLength(1);
  }, 30_000);

  it('a held send_email interrupts the run; the operator approves in agent-saga; the RunState resumes and sends it once', async () => {
    const runId = 'oa-held-email';
    await h.saga.createRun({ runId });
    const approvals = createSagaAgentApprovals(h.saga);
    const { agent, runner, seen } = agentFor(runId, patient({ call: 'send_email', args: EMAIL }), {
      approvals,
    });

    const asked = await runner.run(agent, 'Tell Ada her refund is on its way.', { maxTurns: 5 });
    const interruptions = asked.interruptions;
    expect(interruptions.map((i) => i.name)).toEqual(['send_email']);
    const item = interruptions[0]!;
    const callId = (item.rawItem as { callId: string }).callId;
    expect(approvals.held(callId)).toMatchObject({ runId, tool: 'send_email', stepIdx: 0 });
    expect((await h.saga.getRun(runId)).steps.map((s) => s.status)).toEqual(['AWAITING_APPROVAL']);
    expect((await ledgerOf(runId)).emails).toBe(0);
    // Nobody decided yet: the bridge leaves the interruption pending.
    expect(await approvals.applyDecisions(asked.state)).toEqual({
      approved: [],
      rejected: [],
      pending: [callId],
    });

    // The operator reads the harness's approval and decides with its hash.
    const approval = await approvals.approvalFor(item);
    expect(approval).toMatchObject({ status: 'pending', kind: 'step', runId });
    expect(approval!.steps.map((s) => [s.stepIdx, s.tool])).toEqual([[0, 'send_email']]);
    await operator.decideApproval(approval!.id, { decision: 'approve', hash: approval!.hash });

    expect(await approvals.applyDecisions(asked.state, { timeoutMs: 5_000 })).toMatchObject({
      approved: [callId],
      pending: [],
    });
    const resumed = await runner.run(agent, asked.state, { maxTurns: 10 });

    expect(resumed.finalOutput).toBe('done');
    expect(seen.at(-1)).toMatchObject({
      toolName: 'send_email',
      output: { status: 'CONFIRMED', stepIdx: 0 },
    });
    const view = await h.saga.getRun(runId);
    expect(view.steps.map((s) => [s.tool, s.status])).toEqual([['send_email', 'CONFIRMED']]);
    expect(runLedger(h.sandbox.admin.ledger(), view).emails).toBe(1);
  }, 30_000);

  it('a RunState serialised and resumed in a new process after the email went out: read from the log, not sent again', async () => {
    const runId = 'oa-held-resume';
    await h.saga.createRun({ runId });
    const first = agentFor(runId, patient({ call: 'send_email', args: EMAIL }), {
      approvals: createSagaAgentApprovals(h.saga),
    });
    const asked = await first.runner.run(first.agent, 'Tell Ada.', { maxTurns: 3 });
    const saved = asked.state.toString();
    const approval = (await operator.listApprovals({ runId, status: 'pending' }))[0]!;
    await operator.decideApproval(approval.id, { decision: 'approve', hash: approval.hash });
    await waitUntil(async () => (await h.saga.getRun(runId)).steps[0]?.status === 'CONFIRMED');

    // A new process: new tools, a new bridge and a new run handle, which know nothing of the held call.
    const approvals = createSagaAgentApprovals(h.saga);
    const later = agentFor(runId, patient({ call: 'send_email', args: EMAIL }), { approvals });
    const state = await RunState.fromString(later.agent, saved);
    const callId = (state.getInterruptions()[0]!.rawItem as { callId: string }).callId;
    expect(await approvals.applyDecisions(state)).toEqual({ approved: [callId], rejected: [], pending: [] });
    const resumed = await later.runner.run(later.agent, state, { maxTurns: 3 });

    expect(resumed.finalOutput).toBe('done');
    expect(later.seen[0]).toMatchObject({
      toolName: 'send_email',
      output: { status: 'CONFIRMED', stepIdx: 0, replayed: true },
    });
    const view = await h.saga.getRun(runId);
    expect(view.steps.map((s) => [s.tool, s.status])).toEqual([['send_email', 'CONFIRMED']]);
    expect(runLedger(h.sandbox.admin.ledger(), view).emails).toBe(1);
  }, 30_000);

  it('resumed without applying the decision after the operator approved: the settled outcome, no interruption', async () => {
    const runId = 'oa-held-settled';
    await h.saga.createRun({ runId });
    const { agent, runner, seen } = agentFor(runId, patient({ call: 'send_email', args: EMAIL }), {
      approvals: createSagaAgentApprovals(h.saga),
    });
    const asked = await runner.run(agent, 'Tell Ada.', { maxTurns: 3 });
    expect(asked.interruptions).toHaveLength(1);
    const approval = (await operator.listApprovals({ runId, status: 'pending' }))[0]!;
    await operator.decideApproval(approval.id, { decision: 'approve', hash: approval.hash });
    await waitUntil(async () => (await h.saga.getRun(runId)).steps[0]?.status === 'CONFIRMED');

    // The app resumes the state as it is: the SDK asks needsApproval again, which finds the step settled.
    const resumed = await runner.run(agent, asked.state, { maxTurns: 3 });
    expect(resumed.interruptions).toEqual([]);
    expect(seen[0]).toMatchObject({ toolName: 'send_email', output: { status: 'CONFIRMED', stepIdx: 0 } });
    expect(runLedger(h.sandbox.admin.ledger(), await h.saga.getRun(runId)).emails).toBe(1);
  }, 30_000);

  it('an operator rejection reaches the model as the SDK rejection; nothing is sent', async () => {
    const runId = 'oa-held-rejected';
    await h.saga.createRun({ runId });
    const approvals = createSagaAgentApprovals(h.saga);
    const { agent, runner, seen } = agentFor(
      runId,
      (_last, turn) => (turn === 0 ? [{ call: 'send_email', args: EMAIL }] : [{ say: 'ok' }]),
      { approvals },
    );
    const asked = await runner.run(agent, 'Tell Ada.', { maxTurns: 3 });
    const approval = (await approvals.approvalFor(asked.interruptions[0]!))!;
    await operator.decideApproval(approval.id, {
      decision: 'reject',
      hash: approval.hash,
      comment: 'wrong customer',
    });

    const applied = await approvals.applyDecisions(asked.state, { timeoutMs: 5_000 });
    expect(applied.rejected).toHaveLength(1);
    const resumed = await runner.run(agent, asked.state, { maxTurns: 3 });

    expect(resumed.finalOutput).toBe('ok');
    expect(seen).toHaveLength(1);
    expect(String(seen[0]!.output)).toContain('wrong customer');
    const view = await h.saga.getRun(runId);
    expect(view.steps.map((s) => [s.stepIdx, s.status])).toEqual([[0, 'REJECTED']]);
    expect(runLedger(h.sandbox.admin.ledger(), view).emails).toBe(0);
  }, 30_000);

  it('a bad token is thrown out of run() to the app, not shown to the model', async () => {
    const runId = 'oa-bad-token';
    await h.saga.createRun({ runId });
    const stranger = createSagaClient({ baseUrl: h.baseUrl, token: 'not-a-token' });
    const scripted = scriptedModel((_last, turn) =>
      turn === 0
        ? [{ call: 'create_ticket', args: { summary: 'Refund', orderId: '1182' } }]
        : [{ say: 'ok' }],
    );
    const agent = new Agent({
      name: 'support',
      tools: sagaAgentTools(stranger.run(runId), { tools }),
    });
    const runner = new Runner({ modelProvider: scripted.provider, tracingDisabled: true });

    // The SDK wraps what a tool threw in its ToolCallError; the client's error is its `error`.
    await expect(runner.run(agent, 'Open a ticket.', { maxTurns: 3 })).rejects.toMatchObject({
      name: 'ToolCallError',
      error: { name: 'UnauthorizedError', code: 'UNAUTHORIZED' },
    });
    expect(scripted.seen).toEqual([]);
    expect((await h.saga.getRun(runId)).steps).toEqual([]);
  }, 30_000);

  it('an approval made only in the SDK releases nothing: the model is told the step still waits', async () => {
    const runId = 'oa-forged-approval';
    await h.saga.createRun({ runId });
    const { agent, runner, seen } = agentFor(runId, (_last, turn) =>
      turn === 0 ? [{ call: 'send_email', args: EMAIL }] : [{ say: 'waiting' }],
    );
    const asked = await runner.run(agent, 'Tell Ada.', { maxTurns: 3 });
    const [item] = asked.interruptions;
    expect(item).toBeDefined();

    asked.state.approve(item!);
    const resumed = await runner.run(agent, asked.state, { maxTurns: 3 });

    // execute ran (the model was shown its result) and found the step still held.
    expect(resumed.finalOutput).toBe('waiting');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.output).toMatchObject({ status: 'AWAITING_APPROVAL', stepIdx: 0 });
    expect((await h.saga.getRun(runId)).steps.map((s) => s.status)).toEqual(['AWAITING_APPROVAL']);
    expect((await ledgerOf(runId)).emails).toBe(0);
  }, 30_000);
});
