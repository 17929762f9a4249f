/**
 * A model for the simulation's real-model mode without a key: the AI SDK's own `MockLanguageModelV3`
 * (`ai/test`) reading what a real model is shown — the task's words (play-model-agent.ts's
 * `describeTask`) and the tool results the SDK put in the prompt — and doing the task's steps in order:
 * the next step whose last answer was not a success is called (again, with the same words), an id a step
 * names is filled in from the answer of the step that returned it, and after too many calls it gives up.
 * It ends with the RESULT line the instructions ask for.
 */
import { MockLanguageModelV3 } from 'ai/test';

type GenerateFn = Extract<
  NonNullable<NonNullable<ConstructorParameters<typeof MockLanguageModelV3>[0]>['doGenerate']>,
  (...args: never[]) => unknown
>;
type CallOptions = Parameters<GenerateFn>[0];
type GenerateResult = Awaited<ReturnType<GenerateFn>>;

interface Step {
  readonly tool: string;
  readonly args: Record<string, unknown>;
}

/** Why 12: a task of five steps, each retried once or twice. */
const MAX_CALLS = 12;
const STEP_LINE = /^(\d+)\. (\w+) with (\{.*\})$/;
const REF = /^<the id step (\d+) returned>$/;

function stepsOf(task: string): Step[] {
  return task
    .split('\n')
    .map((l) => STEP_LINE.exec(l))
    .filter((m) => m !== null)
    .map((m) => ({ tool: m[2]!, args: JSON.parse(m[3]!) as Record<string, unknown> }));
}

/** The id a successful answer carries (agent-saga's CONFIRMED, the naive harness's done), else undefined. */
function successId(output: unknown): string | null | undefined {
  const o = output as { status?: string; externalRef?: string | null; id?: string | null } | null;
  if (o?.status === 'CONFIRMED') return o.externalRef ?? null;
  if (o?.status === 'done') return o.id ?? null;
  return undefined;
}

export function taskFollowingModel(): MockLanguageModelV3 {
  let callIds = 0;
  const doGenerate = ({ prompt }: CallOptions): Promise<GenerateResult> => {
    const task = prompt
      .filter((m) => m.role === 'user')
      .flatMap((m) => m.content)
      .map((p) => (p.type === 'text' ? p.text : ''))
      .join('\n');
    const steps = stepsOf(task);
    const results: { toolName: string; output: unknown }[] = [];
    for (const m of prompt)
      if (m.role === 'tool')
        for (const p of m.content)
          if (p.type === 'tool-result')
            results.push({ toolName: p.toolName, output: 'value' in p.output ? p.output.value : p.output });
    const ids = steps.map((s) => {
      const done = results.filter((r) => r.toolName === s.tool).map((r) => successId(r.output));
      return done.find((d) => d !== undefined);
    });
    const next = ids.findIndex((id) => id === undefined);
    const text = (t: string): GenerateResult['content'] => [{ type: 'text', text: t }];
    let content: GenerateResult['content'];
    if (next < 0) content = text('Every step is done.\nRESULT: success');
    else if (results.length >= MAX_CALLS) content = text(`Step ${next + 1} never succeeded.\nRESULT: failed`);
    else {
      const step = steps[next]!;
      const args = Object.fromEntries(
        Object.entries(step.args).map(([k, v]) => {
          const ref = typeof v === 'string' ? REF.exec(v) : null;
          return [k, ref ? ids[Number(ref[1]) - 1] : v];
        }),
      );
      content = [
        {
          type: 'tool-call',
          toolCallId: `call-${++callIds}`,
          toolName: step.tool,
          input: JSON.stringify(args),
        },
      ];
    }
    return Promise.resolve({
      content,
      finishReason: {
        unified: next >= 0 && content[0]?.type === 'tool-call' ? 'tool-calls' : 'stop',
        raw: undefined,
      },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 10, text: 10, reasoning: undefined },
      },
      warnings: [],
    });
  };
  return new MockLanguageModelV3({ doGenerate });
}
