import type { CallOutcome } from './call-outcome.js';
import type { RunView, StepView } from './run-view.js';
import type { RunStatus } from './statuses.js';

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
  /**
   * The run and all its steps, from the log. With `waitMs`, a long poll: the dispatcher answers as soon
   * as the run's status is not one of `whileStatus` (default: the open ones, so it waits for the run to
   * end), or when `waitMs` is up, with the run as it then is (check its status).
   */
  getRun(runId: string, options?: ReadRunOptions): Promise<RunView>;
  /**
   * One step of the run, from the log; with `waitMs`, answered as soon as its outcome is in (it is no longer
   * held, sent, unknown or to be sent again, or its run stopped going forward), or when `waitMs` is up.
   * Never sends anything: a read-back that waits. `NotFoundError` when the run has no such step.
   */
  getStep(runId: string, stepIdx: number, options?: ReadStepOptions): Promise<StepView>;
}

export interface ReadRunOptions {
  /** How long the dispatcher may hold the answer while the run's status is in `whileStatus` (≤ 60 000 ms). */
  readonly waitMs?: number;
  /** The statuses to wait through; default RUNNING, AWAITING_APPROVAL and COMPENSATING (until it ends). */
  readonly whileStatus?: readonly RunStatus[];
}

export interface ReadStepOptions {
  /** How long the dispatcher may hold the answer while the step's outcome is still to come (≤ 60 000 ms). */
  readonly waitMs?: number;
}
