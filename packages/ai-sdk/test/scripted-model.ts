/**
 * A scripted model on the AI SDK's own `MockLanguageModelV3` (`ai/test`): each turn, a script (see
 * `test/fixtures/scripted-agent.ts`) reads the tool results the SDK put in the prompt (exactly what a real
 * model would be shown) and answers with tool calls or text, as a patient model would. No model key, no
 * network.
 */
import { MockLanguageModelV3 } from 'ai/test';
import {
  scriptTurns,
  type Script,
  type ScriptedModelOptions,
  type SeenResult,
} from '../../../test/fixtures/scripted-agent.js';

export type { Move, Script, SeenResult } from '../../../test/fixtures/scripted-agent.js';

type GenerateFn = Extract<
  NonNullable<NonNullable<ConstructorParameters<typeof MockLanguageModelV3>[0]>['doGenerate']>,
  (...args: never[]) => unknown
>;
type CallOptions = Parameters<GenerateFn>[0];
type GenerateResult = Awaited<ReturnType<GenerateFn>>;

export interface ScriptedModel {
  readonly model: MockLanguageModelV3;
  /** Every tool result the model was shown, in order (a result shown again in a later prompt once). */
  readonly seen: SeenResult[];
}

export function scriptedModel(script: Script, options: ScriptedModelOptions = {}): ScriptedModel {
  const turns = scriptTurns(script, options);
  const doGenerate = async (options: CallOptions): Promise<GenerateResult> => {
    const content = (await turns.next(resultsIn(options.prompt))).map((m) =>
      'say' in m
        ? { type: 'text' as const, text: m.say }
        : {
            type: 'tool-call' as const,
            toolCallId: m.callId!,
            toolName: m.call,
            input: JSON.stringify(m.args),
          },
    );
    return {
      content,
      finishReason: {
        unified: content.some((c) => c.type === 'tool-call') ? 'tool-calls' : 'stop',
        raw: undefined,
      },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 10, text: 10, reasoning: undefined },
      },
      warnings: [],
    };
  };
  return { model: new MockLanguageModelV3({ doGenerate }), seen: turns.seen };
}

/** The tool results in a prompt, oldest first. */
function resultsIn(prompt: CallOptions['prompt']): SeenResult[] {
  const out: SeenResult[] = [];
  for (const message of prompt) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      const o = part.output;
      const output =
        o.type === 'json' || o.type === 'text'
          ? o.value
          : o.type === 'execution-denied'
            ? { denied: o.reason }
            : o;
      out.push({ callId: part.toolCallId, toolName: part.toolName, output });
    }
  }
  return out;
}
