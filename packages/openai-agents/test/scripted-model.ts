/**
 * A scripted model on the Agents SDK's own `Model` and `ModelProvider` interfaces (what its docs and tests
 * do for a custom provider): each turn, a script reads the tool results the SDK put in the model's input
 * (exactly what a real model would be shown) and answers with function calls or text, as a patient model
 * would. No model key, no network.
 */
import {
  Usage,
  type AgentInputItem,
  type Model,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type StreamEvent,
} from '@openai/agents';
import {
  scriptTurns,
  type Script,
  type ScriptedModelOptions,
  type SeenResult,
} from '../../../test/fixtures/scripted-agent.js';

export type { Move, Script, SeenResult } from '../../../test/fixtures/scripted-agent.js';

export interface ScriptedModel {
  /** Give it to a `Runner` (`new Runner({ modelProvider })`); any model name resolves to the script. */
  readonly provider: ModelProvider;
  readonly model: Model;
  /** Every tool result the model was shown, in order (a result shown again in a later input once). */
  readonly seen: SeenResult[];
}

export function scriptedModel(script: Script, options: ScriptedModelOptions = {}): ScriptedModel {
  const turns = scriptTurns(script, options);
  let calls = 0;
  const model: Model = {
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      const inInput = typeof request.input === 'string' ? [] : resultsIn(request.input);
      const output = (await turns.next(inInput)).map((m) =>
        'say' in m
          ? {
              type: 'message' as const,
              role: 'assistant' as const,
              status: 'completed' as const,
              content: [{ type: 'output_text' as const, text: m.say }],
            }
          : {
              type: 'function_call' as const,
              id: `fc-${++calls}`,
              callId: m.callId!,
              name: m.call,
              status: 'completed' as const,
              arguments: JSON.stringify(m.args),
            },
      );
      return Promise.resolve({
        usage: new Usage({ requests: 1, inputTokens: 10, outputTokens: 10 }),
        output,
      });
    },
    // eslint-disable-next-line require-yield -- the scripted model answers whole responses only
    async *getStreamedResponse(): AsyncIterable<StreamEvent> {
      await Promise.resolve();
      throw new Error('scriptedModel: streaming is not scripted; call run() without stream');
    },
  };
  return { provider: { getModel: () => model }, model, seen: turns.seen };
}

/** The tool results in a model's input, oldest first. */
function resultsIn(input: readonly AgentInputItem[]): SeenResult[] {
  const out: SeenResult[] = [];
  for (const item of input) {
    if (item.type !== 'function_call_result') continue;
    const o = item.output;
    const text = typeof o === 'string' ? o : !Array.isArray(o) && o.type === 'text' ? o.text : undefined;
    out.push({ callId: item.callId, toolName: item.name, output: text === undefined ? o : parse(text) });
  }
  return out;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
