/**
 * A real model as the agent (`pnpm simulate --real-model N`): the episode's task in words, the harness's
 * tools through the AI SDK (`generateText` in a tool loop), and the model's own last word on how it went.
 * agent-saga's tools are `@agent-saga/ai-sdk`'s `sagaTools`, as an app gives them to a model, with held
 * calls going through the SDK's approval flow and the simulation's operators deciding them; the naive
 * harness's are the same connectors behind its argument-hash keys (model-seats.ts).
 *
 * What the model decides is its own: whether to retry, reword, read back or give up. Grading is the
 * scripted agent's (the vendors' ledgers); only the policy mix drawn for the episode is not played. The
 * pivot workflow is left to the scripted agent: the AI SDK integration has no pivot proposal.
 */
import { generateText, stepCountIs, type LanguageModel, type ModelMessage, type ToolSet } from 'ai';
import type { Episode } from './draw-episodes.js';
import type { AgentResult } from './play-agent.js';
import type { ToolPort } from './tool-port.js';
import { confirmationSubject } from './support-workflows.js';
import { AgentReport, type TranscriptEntry } from './tool-port.js';

/** What the model agent needs of a harness for one episode beside its port (which starts, finishes, undoes). */
export interface ModelSeat {
  /** The tools the model is given: the episode's writes. */
  tools(): ToolSet;
  /**
   * After a turn that ended with approval requests (a call the harness holds for a person): the SDK's
   * responses once decided, or none when this harness holds nothing.
   */
  decide?(content: readonly unknown[]): Promise<ModelMessage | null>;
  /** What the model's calls did, as far as the harness's answers said (the naive harness undoes from it). */
  transcript(): readonly TranscriptEntry[];
}

/** The model and which episodes it plays, for one harness. */
export interface ModelAgent {
  readonly model: LanguageModel;
  /** The model's seat for `episode` over `port`, or undefined when the scripted agent plays it. */
  seatOf(episode: Episode, port: ToolPort): ModelSeat | undefined;
}

/**
 * The episodes a real model plays when `count` are asked for: the first `count` of the run without a pivot
 * (the pivot is proposed through the client, which the AI SDK integration does not offer a model), so both
 * harnesses give the model the same episodes.
 */
export function modelEpisodes(episodes: readonly Episode[], count: number): ReadonlySet<number> {
  return new Set(
    episodes
      .filter((e) => e.pivotAt === undefined)
      .slice(0, count)
      .map((e) => e.index),
  );
}

/**
 * Why 24 steps a turn and 4 turns: a task is at most five writes, and a model that retries each a few times
 * stays within 24 calls; each held email ends a turn until its person decided.
 */
const STEPS_PER_TURN = 24;
const TURNS = 4;

const RESULT_LINE = /RESULT:\s*(success|failed)/i;

const INSTRUCTIONS =
  'You are a customer-support agent. You act only through the tools you are given; every call changes ' +
  'a real system (a ticket, a card, a shipment, an email). Do each step of the task once. When a tool ' +
  'answers that the outcome is unknown or pending, do not assume it failed or succeeded: follow what the ' +
  'answer says. When the task cannot be finished, stop. End your last message with one line: ' +
  '"RESULT: success" if every step of the task is done, or "RESULT: failed" otherwise.';

/** The task of an episode in words, with the exact arguments of each write. */
export function describeTask(episode: Episode): string {
  const { ids } = episode;
  const lines = episode.writes.map((w, i) => {
    const args = JSON.stringify(w.args(1, false), (_, v: unknown) =>
      typeof v === 'object' && v !== null && 'refOfWrite' in v
        ? `<the id step ${(v as { refOfWrite: number }).refOfWrite + 1} returned>`
        : v,
    );
    return `${i + 1}. ${w.tool} with ${args}`;
  });
  return [
    `Order ${ids.orderId} of customer ${ids.customerId} (${ids.email}) needs support.`,
    'Do these steps, in order:',
    ...lines,
    episode.writes.some((w) => w.tool === 'send_email')
      ? `(The email's subject will be "${confirmationSubject(ids)}".)`
      : '',
  ]
    .filter((l) => l !== '')
    .join('\n');
}

export async function playModelAgent(
  episode: Episode,
  port: ToolPort,
  seat: ModelSeat,
  model: LanguageModel,
): Promise<AgentResult> {
  const notes: string[] = [];
  let calls = 0;
  await port.start();
  const messages: ModelMessage[] = [{ role: 'user', content: describeTask(episode) }];
  let text = '';
  let held = 0;
  for (let turn = 1; turn <= TURNS; turn++) {
    const result = await generateText({
      model,
      system: INSTRUCTIONS,
      messages,
      tools: seat.tools(),
      stopWhen: stepCountIs(STEPS_PER_TURN),
      experimental_onToolCallFinish: () => {
        calls += 1;
      },
    });
    messages.push(...result.response.messages);
    text = result.text;
    const asked = result.content.filter((p) => p.type === 'tool-approval-request').length;
    if (asked === 0 || !seat.decide) break;
    held += asked;
    const answer = await seat.decide(result.content);
    if (answer === null) break;
    messages.push(answer);
  }
  const said = RESULT_LINE.exec(text)?.[1]?.toLowerCase();
  notes.push(`the model: ${text.trim().split('\n').at(-1)?.slice(0, 200) ?? ''}`);
  if (held > 0) notes.push(`calls held for a person: ${held}`);
  const transcript = seat.transcript();
  if (said === 'success') {
    await port.finish();
    return { report: AgentReport.SUCCESS, transcript, calls, notes };
  }
  await port.undo(`the model did not finish the task (${said ?? 'no RESULT line'}); undo it`, transcript);
  return { report: AgentReport.FAILED, transcript, calls, notes };
}
