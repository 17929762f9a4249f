/**
 * A scripted model on the AI SDK's own `MockLanguageModelV3` (`ai/test`): each turn, a script reads the
 * tool results the SDK put in the prompt (exactly what a real model would be shown) and answers with tool
 * calls or text, as a patient model would. No model key, no network.
 */
import { MockLanguageModelV3 } from 'ai/test';

type GenerateFn = Extract<
  NonNullable<NonNullable<ConstructorParameters<typeof MockLanguageModelV3>[0]>['doGenerate']>,
  (...args: never[]) => unknown
>;
type CallOptions = Parameters<GenerateFn>[0];
type GenerateResult = Awaited<ReturnType<GenerateFn>>;

/** One tool result as the model saw it in its prompt. */
export interface SeenResult {
  readonly toolCallId: string;
  readonly toolName: string;
  /** `json` and `text` outputs as their value; a denial as `{ denied: reason }`. */
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
  readonly model: MockLanguageModelV3;
  /** Every tool result the model was shown, in order (a result shown again in a later prompt once). */
  readonly seen: SeenResult[];
}

export interface ScriptedModelOptions {
  /**
   * A pause before each turn after the first, as a real model takes to answer: a script that repeats a
   * call until it settles would otherwise spend its turns in milliseconds, before a vendor's search lag.
   */
  readonly thinkMs?: number;
}

export function scriptedModel(script: Script, { thinkMs = 0 }: ScriptedModelOptions = {}): ScriptedModel {
  const seen: SeenResult[] = [];
  let turn = 0;
  let calls = 0;
  const doGenerate = async (options: CallOptions): Promise<GenerateResult> => {
    if (turn > 0 && thinkMs > 0) await new Promise((r) => setTimeout(r, thinkMs));
    const all = resultsIn(options.prompt);
    const fresh = all.filter((r) => !seen.some((s) => s.toolCallId === r.toolCallId));
    seen.push(...fresh);
    const moves = script(fresh, turn++);
    const content = moves.map((m) =>
      'say' in m
        ? { type: 'text' as const, text: m.say }
        : {
            type: 'tool-call' as const,
            toolCallId: m.id ?? `call-${++calls}`,
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
  return { model: new MockLanguageModelV3({ doGenerate }), seen };
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
      out.push({ toolCallId: part.toolCallId, toolName: part.toolName, output });
    }
  }
  return out;
}
