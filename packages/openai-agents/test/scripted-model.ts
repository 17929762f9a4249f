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

/** One tool result as the model saw it in its input. */
export interface SeenResult {
  readonly callId: string;
  readonly toolName: string;
  /** The output text parsed as JSON when it is JSON (agent-saga's results are), else the text itself. */
  readonly output: unknown;
}

/** What the script answers with in one turn. */
export type Move =
  | { readonly call: string; readonly args: Readonly<Record<string, unknown>>; readonly id?: string }
  | { readonly say: string };

/**
 * The script: given the results of the model's last tool calls (empty on the first turn) and the turn's
 * number, the moves of this turn. Several calls in one turn are parallel tool calls.
 */
export type Script = (last: readonly SeenResult[], turn: number) => readonly Move[];

export interface ScriptedModel {
  /** Give it to a `Runner` (`new Runner({ modelProvider })`); any model name resolves to the script. */
  readonly provider: ModelProvider;
  readonly model: Model;
  /** Every tool result the model was shown, in order (a result shown again in a later input once). */
  readonly seen: SeenResult[];
}

export interface ScriptedModelOptions {
  /**
   * How long the model "thinks" before a turn that reads tool results. A real model takes seconds; without
   * a pause a patient model's retries of an UNKNOWN call would use up the run's turns (`maxTurns`) before
   * the harness could find the outcome (the vendor's search lag is 800 ms in the harness).
   */
  readonly thinkMs?: number;
}

export function scriptedModel(script: Script, { thinkMs = 0 }: ScriptedModelOptions = {}): ScriptedModel {
  const seen: SeenResult[] = [];
  let turn = 0;
  let calls = 0;
  const model: Model = {
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      if (turn > 0 && thinkMs > 0) await new Promise((r) => setTimeout(r, thinkMs));
      const all = typeof request.input === 'string' ? [] : resultsIn(request.input);
      const fresh = all.filter((r) => !seen.some((s) => s.callId === r.callId));
      seen.push(...fresh);
      const output = script(fresh, turn++).map((m) =>
        'say' in m
          ? {
              type: 'message' as const,
              role: 'assistant' as const,
              status: 'completed' as const,
              content: [{ type: 'output_text' as const, text: m.say }],
            }
          : {
              type: 'function_call' as const,
              id: `fc-${calls + 1}`,
              callId: m.id ?? `call-${++calls}`,
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
  return { provider: { getModel: () => model }, model, seen };
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
