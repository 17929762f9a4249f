import { CallStatus, isSettled, type CallOutcome } from './call-outcome.js';
import {
  ApiErrorCode,
  ConflictError,
  ServiceUnavailableError,
  ToolOutcomeUnknown,
  UnexpectedResponseError,
} from './errors.js';
import type { CallDecision, StepMethods } from './step-methods.js';

/**
 * A run as an agent loop sees it: `call(tool, args)` without step indices. The handle owns the count of
 * the run's steps and sends `stepIdx` on every call, because the harness, never the model, decides which
 * step a call is.
 *
 * How an index is chosen:
 * - On first use (and after `sync()`) the count is read from the log (`getRun`), never from a transcript:
 *   the next new step is one past the highest step in the log (the number of steps, when there are no
 *   gaps). Steps the log holds as INTENDED, UNKNOWN or AWAITING_APPROVAL are remembered as *open*.
 * - A call to a tool that has an open step is a retry of that step, at the same index: the dispatcher
 *   answers it with the step's outcome (a lookup for an UNKNOWN step) instead of acting twice. This is the
 *   rule the dispatcher's own cursor follows; a new intent for the same tool while the old one is open is
 *   refused there (IDEMPOTENCY_MISMATCH) rather than run.
 * - Any other call takes the next index. If the dispatcher wrote nothing there (a pure tool, a 400, a 409
 *   that refused it, a 429 RATE_LIMITED: nothing was done) the index is given back, unless a concurrent call already took a later one: a gap is
 *   harmless, while filling it later would put a new step before older ones in the log's order.
 *
 * When a step becomes open: `ToolOutcomeUnknown`, a 202 (INTENDED, AWAITING_APPROVAL), and also a network
 * failure or 5xx, after which the call may have been recorded. It closes with CONFIRMED, FAILED or REJECTED,
 * or when a STEP_UNRESOLVED refusal carries its settled outcome. A STEP_CONFLICT means the count disagrees
 * with the log (another process wrote this run): the next call re-reads the log first.
 */
export interface RunHandle {
  readonly runId: string;
  /** Calls a tool as the run's next step (or as a retry of the tool's open step). Errors as `client.call`. */
  call(
    tool: string,
    args: Readonly<Record<string, unknown>>,
    options?: { readonly waitMs?: number; readonly decision?: CallDecision },
  ): Promise<CallOutcome>;
  /** Re-reads the count and the open steps from the log. */
  sync(): Promise<void>;
  /** The index the next new step will take; undefined until the log was read. */
  readonly nextStepIdx: number | undefined;
  /** Steps whose outcome this handle has not seen settled, oldest first. */
  readonly openSteps: readonly OpenStep[];
}

export interface OpenStep {
  readonly stepIdx: number;
  readonly tool: string;
}

/**
 * Step statuses in the log (`GET /v1/runs/{runId}`) after which a call to the same tool is a retry of that
 * step: every status but the settled CONFIRMED, FAILED and REJECTED. NOT_EXECUTED is on its way back to
 * INTENDED (a re-dispatch) and MANUAL_INTERVENTION is answered as UNKNOWN until a person settles it. The
 * client's tests check this list against core's `StepStatus`.
 */
export const OPEN_LOG_STATUSES: readonly string[] = [
  'INTENDED',
  'UNKNOWN',
  'AWAITING_APPROVAL',
  'NOT_EXECUTED',
  'MANUAL_INTERVENTION',
];

export function createRunHandle(client: StepMethods, runId: string): RunHandle {
  let next: number | undefined;
  let open: OpenStep[] = [];
  const inFlight = new Set<number>();
  let loading: Promise<void> | undefined;

  async function sync(): Promise<void> {
    const run = await client.getRun(runId);
    next = run.steps.reduce((max, s) => Math.max(max, s.stepIdx + 1), 0);
    open = run.steps
      .filter((s) => OPEN_LOG_STATUSES.includes(s.status))
      .map((s) => ({ stepIdx: s.stepIdx, tool: s.tool }))
      .sort((a, b) => a.stepIdx - b.stepIdx);
  }

  function ensureLoaded(): Promise<void> {
    loading ??= sync().catch((err: unknown) => {
      loading = undefined; // a failed read is retried by the next call
      throw err;
    });
    return loading;
  }

  const markOpen = (step: OpenStep) => {
    if (!open.some((s) => s.stepIdx === step.stepIdx))
      open = [...open, step].sort((a, b) => a.stepIdx - b.stepIdx);
  };
  const markClosed = (stepIdx: number) => {
    open = open.filter((s) => s.stepIdx !== stepIdx);
  };

  async function call(
    tool: string,
    args: Readonly<Record<string, unknown>>,
    options: { readonly waitMs?: number; readonly decision?: CallDecision } = {},
  ) {
    await ensureLoaded();
    const retryOf = open.find((s) => s.tool === tool && !inFlight.has(s.stepIdx));
    const stepIdx = retryOf ? retryOf.stepIdx : next!;
    if (!retryOf) next = stepIdx + 1;
    /** Gives a fresh index back when the dispatcher wrote nothing there. */
    const release = () => {
      if (!retryOf && next === stepIdx + 1) next = stepIdx;
    };

    inFlight.add(stepIdx);
    try {
      const outcome = await client.call(runId, tool, args, {
        stepIdx,
        ...(options.waitMs === undefined ? {} : { waitMs: options.waitMs }),
        ...(options.decision === undefined ? {} : { decision: options.decision }),
      });
      if (outcome.status === CallStatus.PURE) release();
      else if (isSettled(outcome)) markClosed(outcome.stepIdx);
      else markOpen({ stepIdx: outcome.stepIdx, tool });
      return outcome;
    } catch (err) {
      if (err instanceof ToolOutcomeUnknown) markOpen({ stepIdx: err.stepIdx, tool });
      else if (err instanceof ServiceUnavailableError || err instanceof UnexpectedResponseError)
        markOpen({ stepIdx, tool }); // the call may have been recorded: retry it at this index
      else if (err instanceof ConflictError && err.code === ApiErrorCode.STEP_CONFLICT) loading = undefined;
      else {
        if (err instanceof ConflictError && err.outcome && 'stepIdx' in err.outcome && isSettled(err.outcome))
          markClosed(err.outcome.stepIdx);
        release();
      }
      throw err;
    } finally {
      inFlight.delete(stepIdx);
    }
  }

  return {
    runId,
    call,
    sync: () => {
      loading = sync();
      return loading;
    },
    get nextStepIdx() {
      return next;
    },
    get openSteps() {
      return open;
    },
  };
}
