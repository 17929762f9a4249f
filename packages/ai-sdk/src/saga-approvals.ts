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
import type { ToolApprovalResponse } from 'ai';

/** A call the harness holds for a person: what the SDK's approval request stands for. */
export interface HeldCall {
  /** The SDK's id of the model's tool call (`toolCall.toolCallId` of the approval request). */
  readonly toolCallId: string;
  readonly runId: string;
  readonly tool: string;
  /** The step of the run the harness holds (AWAITING_APPROVAL in the log), with its key. */
  readonly stepIdx: number;
  readonly idempotencyKey: string;
}

/** The model's tool call, as an SDK approval request carries it. */
export interface ToolCallRef {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
}

/** What `responses` reads of a content part: an SDK approval request and the tool call it is for. */
export interface ApprovalRequestPart {
  readonly type: string;
  readonly approvalId?: string;
  readonly toolCall?: ToolCallRef;
}

/**
 * The bridge between the SDK's approval flow and agent-saga's hash-bound approvals.
 *
 * How they are tied, and why the SDK's side cannot release anything: when the model calls a tool that
 * may be held, the tool's `needsApproval` sends the call to the harness first. If the harness holds it
 * (AWAITING_APPROVAL: an irreversible tool, or a run policy such as `approveMoneyAbove`), the step is in
 * the log with its key and exact arguments and a harness approval waits for an operator; `needsApproval`
 * answers true, so `generateText` ends with a `tool-approval-request` part for that call. The operator
 * decides through agent-saga (`POST /v1/approvals/{id}/decision` with the approval's hash, an operator
 * token): that decision, and nothing else, releases or refuses the step. `responses` turns each harness
 * decision into the SDK's `tool-approval-response`; on the next `generateText` the tool's `execute` does
 * not act, it reads the outcome of the held step from the harness (from the log, or as a retry of the
 * same step). An approval response made up by the app or forged by a client therefore changes nothing:
 * `execute` finds the step still AWAITING_APPROVAL and tells the model so.
 *
 * A denial made only in the SDK (the app answers `approved: false` on its own) does not refuse the
 * harness's step either: it stays held until an operator rejects it or its deadline passes. Refuse it in
 * agent-saga, then let `responses` carry the rejection to the SDK.
 *
 * Across processes (an approval answered in a later request, with new tools and a new bridge), a held
 * call is found again by its run, tool and arguments among the run's step approvals (the newest that
 * matches: two identical held calls of one run cannot be told apart that way).
 */
export interface SagaApprovals {
  /** The held call behind an SDK tool call, when this process saw it held. */
  held(toolCallId: string): HeldCall | undefined;
  /**
   * The harness's approval of a held call (pending or decided), read from agent-saga: what an operator
   * decides on, with its `hash`. Undefined when no held step is known for the call.
   */
  approvalFor(call: ToolCallRef): Promise<ApprovalView | undefined>;
  /**
   * The SDK's approval responses for the approval requests in `content` (a `generateText` result's
   * `content`) whose harness approval is decided: approved → `approved: true` (execute then reads the
   * step's outcome); rejected, expired or superseded → `approved: false` with the harness's reason.
   * Requests still pending in the harness get no response yet; with `timeoutMs` it polls every `pollMs`
   * (default 250) until each is decided or the time is up. Requests for calls agent-saga does not hold
   * are left to the app.
   */
  responses(
    content: readonly ApprovalRequestPart[],
    options?: { readonly timeoutMs?: number; readonly pollMs?: number },
  ): Promise<ToolApprovalResponse[]>;
  /** Used by `sagaTools`: the run whose tools this bridge serves. */
  attach(run: RunHandle): void;
  /** Used by `sagaTools`: a call the harness answered AWAITING_APPROVAL. */
  record(held: HeldCall): void;
  /**
   * Used by `sagaTools` on resume: the held step's outcome as the log has it, once it is settled
   * (CONFIRMED, FAILED, REJECTED); undefined while it is open, or when no held step is found.
   */
  settledOutcome(runId: string, call: ToolCallRef): Promise<SettledOutcome | undefined>;
}

/** Why 250 ms: a person decides in seconds at best; a poll this often costs the dispatcher nothing. */
const DEFAULT_POLL_MS = 250;

/**
 * Creates the bridge over a client that can read approvals and runs (an agent token may read them; only
 * an operator token may decide).
 */
export function createSagaApprovals(client: Pick<SagaClient, 'getRun' | 'getStep'>): SagaApprovals {
  const byCall = new Map<string, HeldCall>();
  const runs = new Map<string, RunHandle>();

  /** The held step behind `call` and its newest approval: by what this process saw, else by arguments. */
  async function locate(call: ToolCallRef): Promise<FoundHeldStep | undefined> {
    return findHeldStep(client, {
      known: byCall.get(call.toolCallId),
      runIds: [...runs.keys()],
      tool: call.toolName,
      input: call.input,
    });
  }

  async function decidedResponses(content: readonly ApprovalRequestPart[]) {
    const out: ToolApprovalResponse[] = [];
    let waiting = 0;
    for (const part of content) {
      if (part.type !== 'tool-approval-request' || !part.approvalId || !part.toolCall) continue;
      const found = await locate(part.toolCall);
      if (!found) continue;
      const { approval } = found;
      if (approval.status === ApprovalStatus.PENDING) {
        waiting++;
        continue;
      }
      const approved = approval.status === ApprovalStatus.APPROVED;
      out.push({
        type: 'tool-approval-response',
        approvalId: part.approvalId,
        approved,
        reason: approved
          ? `Approved in agent-saga by ${approval.decidedBy ?? 'an operator'}.`
          : `Not approved in agent-saga (${approval.status}${approval.comment ? `: ${approval.comment}` : ''}); ` +
            'nothing was sent. Do not reach the same goal another way.',
      });
      // A refused step is settled (REJECTED) in the log: the handle must not keep it as an open step that
      // the next call of the same tool would retry.
      if (!approved) await runs.get(found.runId)?.sync();
    }
    return { out, waiting };
  }

  return {
    held: (toolCallId) => byCall.get(toolCallId),
    approvalFor: async (call) => (await locate(call))?.approval,
    async responses(content, { timeoutMs = 0, pollMs = DEFAULT_POLL_MS } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { out, waiting } = await decidedResponses(content);
        if (waiting === 0 || Date.now() >= deadline) return out;
        await new Promise((r) => setTimeout(r, pollMs));
      }
    },
    attach(run) {
      runs.set(run.runId, run);
    },
    record(held) {
      byCall.set(held.toolCallId, held);
    },
    async settledOutcome(runId, call) {
      const found = await locate(call);
      if (!found || found.runId !== runId) return undefined;
      return settledOutcomeOfStep(client, runId, found.stepIdx);
    },
  };
}
