/**
 * `pnpm example:ai-sdk`: a Vercel AI SDK agent (`generateText` in a tool loop) whose tools are agent-saga's
 * (`sagaTools` from `@agent-saga/ai-sdk`), against the vendor sandbox and the real connectors: the
 * dispatcher (api, relay, executor) and the reconciler as child processes (`integration-harness.ts`). It
 * ends with the sandbox's ledger: what the run really did.
 *
 * Without a key the model is scripted (the SDK's own `MockLanguageModelV3`) and behaves as a model would:
 *  1. reads the order (a pure tool);
 *  2. opens a ticket, and Jira's answer is lost (504 after the ticket was made): the model is told the
 *     outcome is UNKNOWN and makes the same call again, which lands on the same step and key;
 *  3. replans the ticket in other words: refused as DUPLICATE_OPERATION, naming the earlier ticket;
 *  4. charges the card;
 *  5. emails the customer: irreversible, so agent-saga holds it; the SDK's approval request reaches the
 *     app, an operator approves it through agent-saga (with the approval's hash), and the loop resumes.
 *
 * With OPENAI_API_KEY set, a real model (`OPENAI_MODEL`, default gpt-4o-mini, through `@ai-sdk/openai`)
 * gets the same tools and the same task instead; the operator step is played the same way.
 */
import { generateText, stepCountIs, type LanguageModel, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createSagaApprovals, sagaTools } from '@agent-saga/ai-sdk';
import { runExample, say, type Story } from './integration-harness.js';
import { scriptedPlan, SUPPORT_TASK } from './support-task.js';

/** A scripted model on the SDK's mock: it reads the tool results in its prompt, as a real model would. */
function scriptedModel(): LanguageModel {
  const nextCall = scriptedPlan();
  let n = 0;
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const last = prompt.at(-1);
      const result = last?.role === 'tool' ? last.content.find((p) => p.type === 'tool-result') : undefined;
      const output =
        result?.output.type === 'json' ? (result.output.value as { status?: string }) : undefined;
      const step = await nextCall(output?.status);
      const content = step
        ? [
            {
              type: 'tool-call' as const,
              toolCallId: `call-${++n}`,
              toolName: step.tool,
              input: JSON.stringify(step.args),
            },
          ]
        : [{ type: 'text' as const, text: SUPPORT_TASK.scriptedAnswer }];
      return {
        content,
        finishReason: { unified: step ? 'tool-calls' : 'stop', raw: undefined },
        usage: {
          inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 0, text: 0, reasoning: 0 },
        },
        warnings: [],
      };
    },
  });
}

async function chooseModel(realModel: boolean): Promise<LanguageModel> {
  if (!realModel) return scriptedModel();
  const { openai } = await import('@ai-sdk/openai');
  return openai(process.env.OPENAI_MODEL ?? 'gpt-4o-mini');
}

const story: Story = async ({ saga, realModel, createRun, approve }) => {
  const runId = await createRun();
  const approvals = createSagaApprovals(saga);
  const tools = sagaTools(saga.run(runId), { tools: await saga.listTools(), approvals, waitMs: 2_000 });
  const model = await chooseModel(realModel);
  const messages: ModelMessage[] = [{ role: 'user', content: SUPPORT_TASK.request }];
  let ticketCalls = 0;
  for (let round = 1; round <= 3; round++) {
    const result = await generateText({
      model,
      system: SUPPORT_TASK.instructions,
      messages,
      tools,
      stopWhen: stepCountIs(15),
      // Every tool result, those of approved calls the SDK runs before the model's next turn included.
      experimental_onToolCallFinish: (e) => {
        const out = e.success ? e.output : { thrown: String(e.error) };
        say(`   ${e.toolCall.toolName.padEnd(14)} → ${JSON.stringify(out).slice(0, 150)}`);
        if (e.toolCall.toolName === 'create_ticket') ticketCalls++;
      },
    });
    messages.push(...result.response.messages);
    const requests = result.content.filter((p) => p.type === 'tool-approval-request');
    if (requests.length === 0) {
      say(`\nthe model: ${result.text}`);
      break;
    }
    for (const request of requests) {
      const approval = await approvals.approvalFor(request.toolCall);
      if (approval) await approve(request.toolCall.toolName, approval);
    }
    const responses = await approvals.responses(result.content, { timeoutMs: 10_000 });
    messages.push({ role: 'tool', content: responses });
    say("   the loop resumes with the harness's decision\n");
  }
  return { runId, ticketCalls };
};

runExample({ name: 'ai-sdk', defaultSchema: 'saga_ai_sdk_example' }, story);
