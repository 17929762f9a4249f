/**
 * What every agent-framework integration does with the harness's tools before it wraps them in the
 * framework's own tool type (`@agent-saga/ai-sdk`, `@agent-saga/openai-agents`, the MCP gateway): which
 * tools the model gets, which calls may be held for a person, the sentence that tells the model what the
 * harness does with a tool's calls, and one call through the run with what the model reads of it. Written
 * once here, so the same tool reads the same and a call goes the same way in every framework.
 */
import type { CallOutcome } from './call-outcome.js';
import type { RunHandle } from './run-handle.js';
import { errorResult, isToolArgs, NOT_AN_OBJECT_RESULT, outcomeResult } from './tool-answers.js';
import type { ToolView } from './tool-view.js';

/** The options every framework integration takes for its run's tools. */
export interface AgentToolOptions {
  /** The harness's tools, as `client.listTools()` describes them (`GET /v1/tools`). */
  readonly tools: readonly ToolView[];
  /** Which of them the model gets: names, or a test on the description; every tool when absent. */
  readonly include?: readonly string[] | ((tool: ToolView) => boolean);
  /**
   * Which tools' calls may be held for a person, and so go to the harness from the framework's approval
   * check. Default ({@link holdableByDefault}): the tools whose every call is held (`needsApproval`,
   * irreversible ones) and those that move money (a run's `approveMoneyAbove` may hold them). A call of
   * another tool that the harness holds all the same is answered AWAITING_APPROVAL as a plain result.
   */
  readonly holdable?: (tool: ToolView) => boolean;
  /** How long each call may wait for its step to settle (the dispatcher's `waitMs`, ≤ 60 000 ms). */
  readonly waitMs?: number;
}

export const holdableByDefault = (t: ToolView): boolean => t.needsApproval || t.movesMoney;

/**
 * The tools `include` chooses. A name that the harness does not have is a mistake in the app, refused
 * here (naming it, and `caller`) rather than leaving the model without a tool it was meant to have.
 */
export function chooseTools(options: AgentToolOptions, caller: string): readonly ToolView[] {
  const { include, tools } = options;
  if (Array.isArray(include)) {
    const missing = include.filter((n) => !tools.some((t) => t.name === n));
    if (missing.length > 0)
      throw new RangeError(`${caller}: include names tools the harness does not have: ${missing.join(', ')}`);
  }
  return tools.filter((t) =>
    include === undefined ? true : typeof include === 'function' ? include(t) : include.includes(t.name),
  );
}

/** A sentence the model reads after the tool's own description: what the harness does with its calls. */
const CLASS_NOTE: Readonly<Record<string, string>> = {
  pure: 'Read-only.',
  reversible: 'Recorded in agent-saga’s intent log; undone if the run unwinds.',
  compensatable: 'Recorded in agent-saga’s intent log; undone if the run unwinds.',
  irreversible: 'Irreversible: agent-saga holds each call for a person’s approval before it is sent.',
};

/** The description a model reads for a tool: its own (or its name), then what the harness does with it. */
export function describeForModel(view: ToolView): string {
  return [view.description ?? view.name, CLASS_NOTE[view.class]].filter(Boolean).join(' ');
}

/** What one call to the harness came to: its outcome, or what `run.call` threw. */
export type Submission =
  { readonly ok: true; readonly outcome: CallOutcome } | { readonly ok: false; readonly error: unknown };

/** Marks a call whose input could not be sent at all, so nothing went to the harness. */
const NOT_AN_OBJECT = Symbol('not an object');

/**
 * One call of `tool` through the run, never throwing: input that is not an object is not sent at all. The
 * run handle decides the step (a repeat of a tool's open step is a retry of it).
 */
export function submitCall(
  run: RunHandle,
  tool: string,
  input: unknown,
  waitMs: number | undefined,
): Promise<Submission> {
  if (!isToolArgs(input)) return Promise.resolve({ ok: false, error: NOT_AN_OBJECT });
  return run.call(tool, input, waitMs === undefined ? {} : { waitMs }).then(
    (outcome): Submission => ({ ok: true, outcome }),
    (error: unknown): Submission => ({ ok: false, error }),
  );
}

/** What the model reads of a submission (see `tool-answers.ts`). */
export function submissionResult(s: Submission): unknown {
  if (s.ok) return outcomeResult(s.outcome);
  return s.error === NOT_AN_OBJECT ? NOT_AN_OBJECT_RESULT : errorResult(s.error);
}
