import type { CallOutcome } from './call-outcome.js';
import type { RunView } from './run-view.js';

export interface CallOptions {
  /** The step's index in the run, from the caller's own count of the run's steps (see `RunHandle`). */
  readonly stepIdx: number;
  /** How long the dispatcher may wait for the step to settle before answering INTENDED (≤ 60 000 ms). */
  readonly waitMs?: number;
  /** The model's decision behind this call, kept in the run's journal (intake or retry event). */
  readonly decision?: CallDecision;
}

/**
 * What the agent backend knows about why the model made a call: which model, prompt version and turn, and
 * a reference to its stored reasoning (never the reasoning itself). Each at most 200 characters; the
 * dispatcher refuses an unknown field (400, naming it).
 */
export interface CallDecision {
  readonly model?: string;
  readonly promptVersion?: string;
  readonly turnId?: string;
  readonly reasoningRef?: string;
}

/** Longest `waitMs` the dispatcher accepts; checked here so that a wrong value fails before a request. */
export const MAX_WAIT_MS = 60_000;

/**
 * The client's methods that a run's steps go through: a tool call at a step index and the read of the log.
 * A `SagaClient` has them; a `RunHandle` drives only these, so it depends on them and not on the client.
 */
export interface StepMethods {
  /**
   * Calls a tool as step `stepIdx` of the run. Resolves to the outcome, FAILED included (the real system
   * said no; nothing happened). Throws `ToolOutcomeUnknown` when the outcome is unknown, and a
   * `SagaApiError` subclass when the dispatcher refuses the call.
   */
  call(
    runId: string,
    tool: string,
    args: Readonly<Record<string, unknown>>,
    options: CallOptions,
  ): Promise<CallOutcome>;
  /** The run and all its steps, from the log. */
  getRun(runId: string): Promise<RunView>;
}
