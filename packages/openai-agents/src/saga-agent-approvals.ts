import {
  ApprovalStatus,
  type ApprovalView,
  type RunHandle,
  type SagaClient,
  type SettledOutcome,
  findHeldStep,
  settledOutcomeOfStep,
  type FoundHeldStep,
} from '@agent-saga/client';
import type { RunToolApprovalItem } from '@openai/agents';

/** A call the harness holds for a person: what the SDK's interruption for that call stands for. */
export interface HeldCall {
  /** The SDK's id of the model's function call (`rawItem.callId` of the interruption). */
  readonly callId: string;
  readonly runId: string;
  readonly tool: string;
  /** The step of the run the harness holds (AWAITING_APPROVAL in the log), with its key. */
  readonly stepIdx: number;
  readonly idempotencyKey: string;
}

/** The model's function call, as an interruption carries it (arguments parsed). */
export interface FunctionCallRef {
  readonly callId: string;
  readonly toolName: string;
  readonly input: unknown;
}

/**
 * What `applyDecisions` needs of the SDK's `RunState`: its interruptions, and the SDK's own approve and
 * reject. A `RunState` (`result.state`) is one.
 */
export interface InterruptedState {
  getInterruptions(): RunToolApprovalItem[];
  approve(item: RunToolApprovalItem): void;
  reject(item: RunToolApprovalItem, options?: { message?: string }): void;
}

/** What `applyDecisions` did with the interruptions of a state, by the SDK's call id. */
export interface AppliedDecisions {
  /** Approved in agent-saga: `state.approve` was called; on resume the tool reads the step's outcome. */
  readonly approved: readonly string[];
  /** Rejected, expired or superseded in agent-saga: `state.reject` with the harness's reason. */
  readonly rejected: readonly string[];
  /** Still pending in agent-saga: left as they are; resuming now interrupts on them again. */
  readonly pending: readonly string[];
}

/**
 * The bridge between the Agents SDK's run-state interruptions and agent-saga's hash-bound approvals.
 *
 * How they are tied, and why the SDK's side cannot release anything: when the model calls a tool that
 * may be held, the tool's `needsApproval` sends the call to the harness first. If the harness holds it
 * (AWAITING_APPROVAL: an irreversible tool, or a run policy such as `approveMoneyAbove`), the step is in
 * the log with its key and exact arguments and a harness approval waits for an operator; `needsApproval`
 * answers true, so `run(agent, input)` ends with `result.interruptions` holding that call. The operator
 * decides through agent-saga (`POST /v1/approvals/{id}/decision` with the approval's hash, an operator
 * token): that decision, and nothing else, releases or refuses the step. `applyDecisions(result.state)`
 * turns each harness decision into the SDK's `state.approve` or `state.reject`; on `run(agent, state)`
 * the tool's `execute` does not act, it reads the outcome of the held step from the harness (from the
 * log, or as a retry of the same step). An SDK approval made up by the app (`state.approve` on its own)
 * therefore changes nothing: `execute` finds the step still AWAITING_APPROVAL and tells the model so.
 *
 * A rejection made only in the SDK does not refuse the harness's step either: it stays held until an
 * operator rejects it or its deadline passes. Refuse it in agent-saga, then let `applyDecisions` carry
 * the rejection to the SDK.
 *
 * Across processes (a `RunState` serialised with `state.toString()` and resumed later with new tools and
 * a new bridge), a held call is found again by its run, tool and arguments among the run's step
 * approvals (the newest that matches: two identical held calls of one run cannot be told apart that way).
 */
export interface SagaAgentApprovals {
  /** The held call behind an SDK function call, when this process saw it held (or applied its decision). */
  held(callId: string): HeldCall | undefined;
  /**
   * The harness's approval of a held call (pending or decided), read from agent-saga: what an operator
   * decides on, with its `hash`. Undefined when no held step is known for the call.
   */
  approvalFor(call: FunctionCallRef | RunToolApprovalItem): Promise<ApprovalView | undefined>;
  /**
   * Applies agent-saga's decisions to the state's interruptions: approved → `state.approve(item)`;
   * rejected, expired or superseded → `state.reject(item, { message })` with the harness's reason.
   * Interruptions still pending in the harness are left as they are; with `timeoutMs` it polls every
   * `pollMs` (default 250) until each is decided or the time is up. Interruptions for calls agent-saga
   * does not hold are left to the app.
   */
  applyDecisions(
    state: InterruptedState,
    options?: { readonly timeoutMs?: number; readonly pollMs?: number },
  ): Promise<AppliedDecisions>;
  /** Used by `sagaAgentTools`: the run whose tools this bridge serves. */
  attach(run: RunHandle): void;
  /** Used by `sagaAgentTools`: a call the harness answered AWAITING_APPROVAL. */
  record(held: HeldCall): void;
  /**
   * Used by `sagaAgentTools` on resume: the held step's outcome as the log has it, once it is settled
   * (CONFIRMED, FAILED, REJECTED); undefined while it is open, or when no held step is found.
   */
  settledOutcome(runId: string, call: FunctionCallRef): Promise<SettledOutcome | undefined>;
}

/** Why 250 ms: a person decides in seconds at best; a poll this often costs the dispatcher nothing. */
const DEFAULT_POLL_MS = 250;

/**
 * Creates the bridge over a client that can read approvals and runs (an agent token may read them; only
 * an operator token may decide).
 */
export function createSagaAgentApprovals(client: Pick<SagaClient, 'getRun' | 'getStep'>): SagaAgentApprovals {
  const byCall = new Map<string, HeldCall>();
  const runs = new Map<string, RunHandle>();

  /** The held step behind `call` and its newest approval: by what this process saw, else by arguments. */
  async function locate(call: FunctionCallRef): Promise<FoundHeldStep | undefined> {
    const found = await findHeldStep(client, {
      known: byCall.get(call.callId),
      runIds: [...runs.keys()],
      tool: call.toolName,
      input: call.input,
    });
    // Remembered so that the tools of this process know the call is a held one on resume.
    if (found)
      byCall.set(call.callId, {
        callId: call.callId,
        runId: found.runId,
        tool: found.tool,
        stepIdx: found.stepIdx,
        idempotencyKey: found.idempotencyKey,
      });
    return found;
  }

  async function applyOnce(state: InterruptedState) {
    const approved: string[] = [];
    const rejected: string[] = [];
    const pending: string[] = [];
    for (const item of state.getInterruptions()) {
      const call = functionCallOf(item);
      if (!call) continue;
      const found = await locate(call);
      if (!found) continue;
      const { approval } = found;
      if (approval.status === ApprovalStatus.PENDING) {
        pending.push(call.callId);
        continue;
      }
      if (approval.status === ApprovalStatus.APPROVED) {
        state.approve(item);
        approved.push(call.callId);
        continue;
      }
      state.reject(item, {
        message:
          `Not approved in agent-saga (${approval.status}${approval.comment ? `: ${approval.comment}` : ''}); ` +
          'nothing was sent. Do not reach the same goal another way.',
      });
      rejected.push(call.callId);
      // A refused step is settled (REJECTED) in the log: the handle must not keep it as an open step that
      // the next call of the same tool would retry.
      await runs.get(found.runId)?.sync();
    }
    return { approved, rejected, pending };
  }

  return {
    held: (callId) => byCall.get(callId),
    approvalFor: async (call) => {
      const ref = 'rawItem' in call ? functionCallOf(call) : call;
      return ref ? (await locate(ref))?.approval : undefined;
    },
    async applyDecisions(state, { timeoutMs = 0, pollMs = DEFAULT_POLL_MS } = {}) {
      const deadline = Date.now() + timeoutMs;
      const approved: string[] = [];
      const rejected: string[] = [];
      for (;;) {
        const once = await applyOnce(state);
        approved.push(...once.approved);
        rejected.push(...once.rejected);
        if (once.pending.length === 0 || Date.now() >= deadline)
          return { approved, rejected, pending: once.pending };
        await new Promise((r) => setTimeout(r, pollMs));
      }
    },
    attach(run) {
      runs.set(run.runId, run);
    },
    record(held) {
      byCall.set(held.callId, held);
    },
    async settledOutcome(runId, call) {
      const found = await locate(call);
      if (!found || found.runId !== runId) return undefined;
      return settledOutcomeOfStep(client, runId, found.stepIdx);
    },
  };
}

/**
 * The function call an interruption is for, its arguments parsed; undefined for other interruptions
 * (hosted, shell, computer tools) and for arguments that are not JSON, which agent-saga never held.
 */
export function functionCallOf(item: RunToolApprovalItem): FunctionCallRef | undefined {
  const raw = item.rawItem;
  if (raw.type !== 'function_call') return undefined;
  try {
    return { callId: raw.callId, toolName: raw.name, input: JSON.parse(raw.arguments) as unknown };
  } catch {
    return undefined;
  }
}
