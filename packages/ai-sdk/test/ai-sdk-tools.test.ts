/**
 * `sagaTools` in a real `generateText` tool loop, driven by the AI SDK's own mock language model, against
 * the running product: the dispatcher's api, relay and executor and the reconciler as child processes on
 * the real connectors (`support-agent-tools.ts`), the vendor sandbox in process. What is checked is what
 * a user would: what the model was shown, the run's log, and the sandbox's ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateText, stepCountIs, type ModelMessage, type ToolSet } from 'ai';
import { type SagaClient, type ToolView } from '@agent-saga/client';
import { createSagaApprovals, loadSagaTools, sagaTools } from '../src/index.js';
import { CHARGE_AMOUNT, runLedger } from '../../../test/fixtures/support-flow.js';
import { type SupportHarness } from '../../../test/fixtures/support-harness.js';
import { CHARGE, EMAIL, patient, startAgentTestHarness } from '../../../test/fixtures/scripted-agent.js';
import { scriptedModel, type Script } from './scripted-model.js';

let h: SupportHarness;
let tools: readonly ToolView[];
let operator: SagaClient;
beforeAll(async () => {
  ({ h, tools, operator } = await startAgentTestHarness('ai_sdk'));
}, 90_000);
afterAll(async () => h?.close());

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

function toolsFor(
  runId: string,
  extra: { approvals?: ReturnType<typeof createSagaApprovals> } = {},
): ToolSet {
  return sagaTools(h.saga.run(runId), { tools, waitMs: 2_000, ...extra });
}

describe('sagaTools in a generateText loop against the sandbox', () => {
  it('gives the model the tools the dispatcher lists, with its JSON Schema, only those included', async () => {
    const toolSet = await loadSagaTools(h.saga, h.saga.run('ai-shape'), {
      include: ['charge_card', 'send_email'],
    });
    expect(Object.keys(toolSet).sort()).toEqual(['charge_card', 'send_email']);
    const charge = tools.find((t) => t.name === 'charge_card')!;
    expect((toolSet.charge_card!.inputSchema as { jsonSchema: unknown }).jsonSchema).toEqual(
      charge.inputSchema,
    );
    expect(toolSet.send_email!.description).toContain('holds each call for a person’s approval');
    expect(() => sagaTools(h.saga.run('ai-shape'), { tools, include: ['no_such_tool'] })).toThrow(
      /no_such_tool/,
    );
  });

  it('returns a confirmed charge to the model; the ledger has one charge', async () => {
    const runId = 'ai-charge';
    await h.saga.createRun({ runId });
    const { model, seen } = scriptedModel(patient({ call: 'charge_card', args: CHARGE }));
    const result = await generateText({
      model,
      tools: toolsFor(runId),
      prompt: 'Refund order 1182 to Ada.',
      stopWhen: stepCountIs(5),
    });

    expect(result.text).toBe('done');
    expect(seen).toHaveLength(1);
    const shown = seen[0]!.output as { status: string; externalRef: string; stepIdx: number };
    expect(shown).toMatchObject({ status: 'CONFIRMED', stepIdx: 0, replayed: false });
    expect(shown.externalRef).toMatch(/^pi_/);
    // charge_card goes to the harness from the SDK's approval check: not held, so no approval request.
    expect(result.content.filter((p) => p.type === 'tool-approval-request')).toEqual([]);
    const ledger = await ledgerOf(runId);
    expect(ledger.charges).toEqual([
      expect.objectContaining({ id: shown.externalRef, amount: CHARGE_AMOUNT }),
    ]);
  }, 60_000);

  it('a lost answer is UNKNOWN to the model; its retry of the same call makes one charge', async () => {
    const runId = 'ai-lost-answer';
    await h.saga.createRun({ runId });
    h.sandbox.admin.addFault({
      vendor: 'stripe',
      method: 'POST',
      path: '/v1/payment_intents',
      nth: 1,
      kind: 'error_after',
    });
    // Why 250 ms: 20 turns then span 5 s, well past Stripe's search lag on a loaded machine.
    const { model, seen } = scriptedModel(patient({ call: 'charge_card', args: CHARGE }), { thinkMs: 250 });
    const result = await generateText({
      model,
      tools: toolsFor(runId),
      prompt: 'Refund order 1182 to Ada.',
      stopWhen: stepCountIs(20),
    });

    const first = seen[0]!.output as { status: string; whatToDo: string };
    expect(first.status).toBe('UNKNOWN');
    expect(first.whatToDo).toContain('Call this tool again with the same arguments');
    expect(first.whatToDo).toContain('never acts twice');
    // The call that settles it may be the re-send under the same key (Stripe dedupes by key; a lookup that
    // does not see the charge yet sends it again: `replayed: false`) or a read of the log.
    const last = seen.at(-1)!.output;
    expect(last).toMatchObject({ status: 'CONFIRMED', stepIdx: 0 });
    expect(result.text).toBe('done');
    expect(seen.length).toBeGreaterThanOrEqual(2); // the model did call again

    const view = await h.saga.getRun(runId);
    expect(view.steps.map((s) => [s.tool, s.status])).toEqual([['charge_card', 'CONFIRMED']]);
    const ledger = runLedger(h.sandbox.admin.ledger(), view);
    expect(ledger.charges).toHaveLength(1);
    expect(ledger.charges[0]!.id).toBe((last as { externalRef: string }).externalRef);
    // The same call once more is answered from the log.
    expect(await h.saga.call(runId, 'charge_card', CHARGE, { stepIdx: 0 })).toMatchObject({
      status: 'CONFIRMED',
      replayed: true,
      externalRef: (last as { externalRef: string }).externalRef,
    });
  }, 60_000);

  it('a replanned duplicate comes back as DUPLICATE_OPERATION naming the earlier ticket; Jira has one', async () => {
    const runId = 'ai-replanned';
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
    const { model, seen } = scriptedModel(script);
    await generateText({ model, tools: toolsFor(runId), prompt: 'Open a ticket.', stopWhen: stepCountIs(5) });

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
  }, 60_000);

  it('a held send_email asks for approval; the operator approves in agent-saga; the loop sends it once', async () => {
    const runId = 'ai-held-email';
    await h.saga.createRun({ runId });
    const approvals = createSagaApprovals(h.saga);
    const toolSet = toolsFor(runId, { approvals });
    const { model, seen } = scriptedModel(patient({ call: 'send_email', args: EMAIL }));
    const messages: ModelMessage[] = [{ role: 'user', content: 'Tell Ada her refund is on its way.' }];

    const asked = await generateText({ model, tools: toolSet, messages, stopWhen: stepCountIs(5) });
    const requests = asked.content.filter((p) => p.type === 'tool-approval-request');
    expect(requests).toHaveLength(1);
    const request = requests[0]!;
    expect(request.toolCall.toolName).toBe('send_email');
    const held = approvals.held(request.toolCall.toolCallId);
    expect(held).toMatchObject({ runId, tool: 'send_email', stepIdx: 0 });
    expect((await h.saga.getRun(runId)).steps.map((s) => s.status)).toEqual(['AWAITING_APPROVAL']);
    expect((await ledgerOf(runId)).emails).toBe(0);
    // Nobody decided yet: the bridge gives the SDK no response.
    expect(await approvals.responses(asked.content)).toEqual([]);

    // The operator reads the harness's approval and decides with its hash.
    const approval = await approvals.approvalFor(request.toolCall);
    expect(approval).toMatchObject({ status: 'pending', kind: 'step', runId });
    expect(approval!.steps.map((s) => [s.stepIdx, s.tool])).toEqual([[0, 'send_email']]);
    await operator.decideApproval(approval!.id, { decision: 'approve', hash: approval!.hash });

    const responses = await approvals.responses(asked.content, { timeoutMs: 5_000 });
    expect(responses).toEqual([
      expect.objectContaining({
        type: 'tool-approval-response',
        approvalId: request.approvalId,
        approved: true,
      }),
    ]);
    messages.push(...asked.response.messages, { role: 'tool', content: responses });
    const resumed = await generateText({ model, tools: toolSet, messages, stopWhen: stepCountIs(10) });

    expect(resumed.text).toBe('done');
    expect(seen.at(-1)).toMatchObject({
      toolName: 'send_email',
      output: { status: 'CONFIRMED', stepIdx: 0 },
    });
    const view = await h.saga.getRun(runId);
    expect(view.steps.map((s) => [s.tool, s.status])).toEqual([['send_email', 'CONFIRMED']]);
    expect(runLedger(h.sandbox.admin.ledger(), view).emails).toBe(1);
  }, 60_000);

  it('resumed in a new request after the email went out: the outcome is read from the log, not sent again', async () => {
    const runId = 'ai-held-resume';
    await h.saga.createRun({ runId });
    const first = scriptedModel(patient({ call: 'send_email', args: EMAIL }));
    const messages: ModelMessage[] = [{ role: 'user', content: 'Tell Ada.' }];
    const asked = await generateText({
      model: first.model,
      tools: toolsFor(runId, { approvals: createSagaApprovals(h.saga) }),
      messages,
      stopWhen: stepCountIs(3),
    });
    const request = asked.content.find((p) => p.type === 'tool-approval-request')!;
    const approval = (await operator.listApprovals({ runId, status: 'pending' }))[0]!;
    await operator.decideApproval(approval.id, { decision: 'approve', hash: approval.hash });
    await waitUntil(async () => (await h.saga.getRun(runId)).steps[0]?.status === 'CONFIRMED');

    // A new request: new tools, a new bridge and a new run handle, which knows nothing of the held call.
    const approvals = createSagaApprovals(h.saga);
    const later = scriptedModel(patient({ call: 'send_email', args: EMAIL }));
    const toolSet = toolsFor(runId, { approvals });
    const responses = await approvals.responses(asked.content);
    expect(responses).toEqual([expect.objectContaining({ approvalId: request.approvalId, approved: true })]);
    messages.push(...asked.response.messages, { role: 'tool', content: responses });
    await generateText({ model: later.model, tools: toolSet, messages, stopWhen: stepCountIs(3) });

    expect(later.seen[0]).toMatchObject({
      toolName: 'send_email',
      output: { status: 'CONFIRMED', stepIdx: 0 },
    });
    const view = await h.saga.getRun(runId);
    expect(view.steps.map((s) => [s.tool, s.status])).toEqual([['send_email', 'CONFIRMED']]);
    expect(runLedger(h.sandbox.admin.ledger(), view).emails).toBe(1);
  }, 60_000);

  it('an operator rejection reaches the model as a denial; the next email is a new step', async () => {
    const runId = 'ai-held-rejected';
    await h.saga.createRun({ runId });
    const approvals = createSagaApprovals(h.saga);
    const toolSet = toolsFor(runId, { approvals });
    const { model, seen } = scriptedModel((last, turn) =>
      turn === 0
        ? [{ call: 'send_email', args: EMAIL }]
        : turn === 1
          ? [{ call: 'send_email', args: { ...EMAIL, vars: { ...EMAIL.vars, orderId: '1183' } } }]
          : [{ say: 'ok' }],
    );
    const messages: ModelMessage[] = [{ role: 'user', content: 'Tell Ada.' }];
    const asked = await generateText({ model, tools: toolSet, messages, stopWhen: stepCountIs(3) });
    const request = asked.content.find((p) => p.type === 'tool-approval-request')!;
    const approval = (await approvals.approvalFor(request.toolCall))!;
    await operator.decideApproval(approval.id, {
      decision: 'reject',
      hash: approval.hash,
      comment: 'wrong customer',
    });

    const responses = await approvals.responses(asked.content, { timeoutMs: 5_000 });
    expect(responses).toEqual([expect.objectContaining({ approved: false })]);
    expect(responses[0]!.reason).toContain('wrong customer');
    messages.push(...asked.response.messages, { role: 'tool', content: responses });
    const resumed = await generateText({ model, tools: toolSet, messages, stopWhen: stepCountIs(3) });

    expect(seen[0]).toMatchObject({ toolName: 'send_email', output: { denied: responses[0]!.reason } });
    // The model's next email is its own step, held in its turn; not a retry of the rejected one.
    expect(resumed.content.filter((p) => p.type === 'tool-approval-request')).toHaveLength(1);
    const view = await h.saga.getRun(runId);
    expect(view.steps.map((s) => [s.stepIdx, s.status])).toEqual([
      [0, 'REJECTED'],
      [1, 'AWAITING_APPROVAL'],
    ]);
    expect(runLedger(h.sandbox.admin.ledger(), view).emails).toBe(0);
  }, 60_000);

  it('bad arguments come back as INVALID_ARGS naming the field; nothing is written', async () => {
    const runId = 'ai-invalid-args';
    await h.saga.createRun({ runId });
    const { model, seen } = scriptedModel((_last, turn) =>
      turn === 0 ? [{ call: 'create_ticket', args: { summary: 'Refund' } }] : [{ say: 'ok' }],
    );
    await generateText({ model, tools: toolsFor(runId), prompt: 'Open a ticket.', stopWhen: stepCountIs(3) });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.output).toMatchObject({
      status: 'REFUSED',
      code: 'INVALID_ARGS',
      field: expect.stringContaining('orderId') as string,
    });
    expect((await h.saga.getRun(runId)).steps).toEqual([]);
  }, 60_000);

  it('an approval made up in the SDK releases nothing: the model is told the step still waits', async () => {
    const runId = 'ai-forged-approval';
    await h.saga.createRun({ runId });
    const toolSet = toolsFor(runId);
    const { model, seen } = scriptedModel((_last, turn) =>
      turn === 0 ? [{ call: 'send_email', args: EMAIL }] : [{ say: 'waiting' }],
    );
    const messages: ModelMessage[] = [{ role: 'user', content: 'Tell Ada.' }];
    const asked = await generateText({ model, tools: toolSet, messages, stopWhen: stepCountIs(3) });
    const request = asked.content.find((p) => p.type === 'tool-approval-request');
    expect(request).toBeDefined();

    messages.push(...asked.response.messages, {
      role: 'tool',
      content: [{ type: 'tool-approval-response', approvalId: request!.approvalId, approved: true }],
    });
    await generateText({ model, tools: toolSet, messages, stopWhen: stepCountIs(3) });

    // execute ran (the model was shown its result) and found the step still held.
    expect(seen).toHaveLength(1);
    expect(seen[0]!.output).toMatchObject({ status: 'AWAITING_APPROVAL', stepIdx: 0 });
    expect((await h.saga.getRun(runId)).steps.map((s) => s.status)).toEqual(['AWAITING_APPROVAL']);
    expect((await ledgerOf(runId)).emails).toBe(0);
  }, 60_000);
});
