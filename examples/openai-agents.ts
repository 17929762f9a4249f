/**
 * `pnpm example:openai-agents`: an OpenAI Agents SDK agent (`run(agent, input)` with its run-state
 * interruptions) whose tools are agent-saga's (`sagaAgentTools` from `@agent-saga/openai-agents`), against
 * the vendor sandbox and the real connectors: the dispatcher (api, relay, executor) and the reconciler as
 * child processes (`integration-harness.ts`). It ends with the sandbox's ledger: what the run really did.
 *
 * Without a key the model is scripted (a `Model` given to the runner by a `ModelProvider`, the SDK's own
 * interfaces) and behaves as a model would:
 *  1. reads the order (a pure tool);
 *  2. opens a ticket, and Jira's answer is lost (504 after the ticket was made): the model is told the
 *     outcome is UNKNOWN and makes the same call again, which lands on the same step and key;
 *  3. replans the ticket in other words: refused as DUPLICATE_OPERATION, naming the earlier ticket;
 *  4. charges the card;
 *  5. emails the customer: irreversible, so agent-saga holds it; the run ends with an interruption, an
 *     operator approves it through agent-saga (with the approval's hash), the bridge applies that decision
 *     to the SDK's `RunState`, and the run resumes from it.
 *
 * With OPENAI_API_KEY set, a real model (`OPENAI_MODEL`, default gpt-4o-mini, through the SDK's own
 * OpenAI provider) gets the same tools and the same task instead; the operator step is played the same way.
 */
import {
  Agent,
  Runner,
  Usage,
  type AgentInputItem,
  type Model,
  type ModelProvider,
  type RunState,
  type StreamEvent,
} from '@openai/agents';
import { createSagaAgentApprovals, sagaAgentTools } from '@agent-saga/openai-agents';
import { runExample, say, type Story } from './integration-harness.js';
import { scriptedPlan, SUPPORT_TASK } from './support-task.js';

/** The status in the newest tool result of the model's input, as agent-saga wrote it (JSON text). */
function lastStatus(input: string | AgentInputItem[]): string | undefined {
  const last = typeof input === 'string' ? undefined : input.at(-1);
  if (last?.type !== 'function_call_result') return undefined;
  const text = typeof last.output === 'string' ? last.output : 'text' in last.output ? last.output.text : '';
  try {
    return (JSON.parse(text) as { status?: string }).status;
  } catch {
    return undefined;
  }
}

/** A scripted model on the SDK's `Model` interface: it reads the tool results in its input, as a real model would. */
function scriptedProvider(): ModelProvider {
  const nextCall = scriptedPlan();
  let n = 0;
  const model: Model = {
    async getResponse({ input }) {
      const step = await nextCall(lastStatus(input));
      n++;
      return {
        usage: new Usage(),
        output: step
          ? [
              {
                type: 'function_call' as const,
                callId: `call-${n}`,
                name: step.tool,
                status: 'completed' as const,
                arguments: JSON.stringify(step.args),
              },
            ]
          : [
              {
                type: 'message' as const,
                role: 'assistant' as const,
                status: 'completed' as const,
                content: [{ type: 'output_text' as const, text: SUPPORT_TASK.scriptedAnswer }],
              },
            ],
      };
    },
    // eslint-disable-next-line require-yield -- the scripted model answers whole responses only
    async *getStreamedResponse(): AsyncIterable<StreamEvent> {
      await Promise.resolve();
      throw new Error('the scripted model does not stream');
    },
  };
  return { getModel: () => model };
}

/** The runner: the scripted model without a key; the SDK's OpenAI provider (its default) with one. */
function chooseRunner(realModel: boolean): Runner {
  return realModel
    ? new Runner({ model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini', tracingDisabled: true })
    : new Runner({ modelProvider: scriptedProvider(), tracingDisabled: true });
}

const story: Story = async ({ saga, realModel, createRun, approve }) => {
  const runId = await createRun();
  const approvals = createSagaAgentApprovals(saga);
  const agent = new Agent({
    name: 'support',
    instructions: SUPPORT_TASK.instructions,
    tools: sagaAgentTools(saga.run(runId), { tools: await saga.listTools(), approvals, waitMs: 2_000 }),
  });
  const runner = chooseRunner(realModel);
  let ticketCalls = 0;
  // Every tool result the model reads, those of approved calls run on resume included.
  runner.on('agent_tool_end', (_ctx, _agent, tool, result) => {
    say(`   ${tool.name.padEnd(14)} → ${result.slice(0, 150)}`);
    if (tool.name === 'create_ticket') ticketCalls++;
  });
  const runTurns = (from: string | RunState<unknown, typeof agent>) =>
    runner.run(agent, from, { maxTurns: 15 });
  let input: string | RunState<unknown, typeof agent> = SUPPORT_TASK.request;
  for (let round = 1; round <= 3; round++) {
    const result = await runTurns(input);
    if (result.interruptions.length === 0) {
      say(`\nthe model: ${String(result.finalOutput)}`);
      break;
    }
    for (const item of result.interruptions) {
      const approval = await approvals.approvalFor(item);
      if (approval) await approve(item.name ?? 'a tool', approval);
    }
    await approvals.applyDecisions(result.state, { timeoutMs: 10_000 });
    say("   the run resumes from its RunState with the harness's decision\n");
    input = result.state;
  }
  return { runId, ticketCalls };
};

runExample({ name: 'openai-agents', defaultSchema: 'saga_openai_agents_example' }, story);
