import {
  CallStatus,
  chooseTools,
  describeForModel,
  holdableByDefault,
  submissionResult,
  submitCall,
  type AgentToolOptions,
  type RunHandle,
  type SagaClient,
  type Submission,
  type ToolView,
} from '@agent-saga/client';
import { jsonSchema, tool, type ModelMessage, type Tool, type ToolSet } from 'ai';
import type { SagaApprovals } from './saga-approvals.js';

/** Which tools, which may be held, how long a call waits (see `AgentToolOptions`), and the approvals. */
export interface SagaToolsOptions extends AgentToolOptions {
  /**
   * The bridge to agent-saga's approvals (`createSagaApprovals(client)`): it learns which SDK tool calls
   * the harness holds, and turns operators' decisions into the SDK's approval responses. Without it the
   * SDK's approval flow still runs for held calls, and the app reads the harness's approvals itself.
   * Which calls go through it: `holdable` (see `sagaTools`).
   */
  readonly approvals?: SagaApprovals;
}

/**
 * The run's tools as an AI SDK `ToolSet`: each one's `inputSchema` is the harness's JSON Schema (the
 * harness parses the arguments; the SDK passes them on as the model wrote them) and its `execute` goes
 * through `run.call`, so the run handle, never the model, decides which step a call is, and a call
 * repeated after a lost answer is a retry of the same step with the same idempotency key.
 *
 * What the model reads (see `tool-answers.ts` in `@agent-saga/client`): a pure tool's result as it is; CONFIRMED with its result
 * and external ref; UNKNOWN and INTENDED as a result that says the outcome is not known yet, that the
 * harness is asking the real system by the same key, and that the same call again returns the resolved
 * outcome without acting twice; FAILED and REJECTED as results that say nothing happened; a refusal
 * (DUPLICATE_OPERATION, STEP_UNRESOLVED, BUDGET_EXCEEDED, INVALID_ARGS, any other code) as a result with
 * its code, message, field and what to do. Thrown, to the app: a bad token, an unknown run.
 *
 * Held calls use the SDK's approval flow: for a holdable tool, `needsApproval` sends the call to the
 * harness (the call is made once either way, only earlier). If the harness holds it, `needsApproval` is
 * true and the SDK asks for an approval; the held step's outcome is read by `execute` once the app
 * answers, which it does from the operator's decision in agent-saga (see `SagaApprovals`). If the
 * harness does not hold it, its outcome is kept for `execute`, which returns it without a second call.
 */
export function sagaTools(run: RunHandle, options: SagaToolsOptions): ToolSet {
  const { approvals, holdable = holdableByDefault, waitMs } = options;
  const chosen = chooseTools(options, 'sagaTools');
  /** Outcomes of calls sent from `needsApproval` and not held, by the SDK's tool call id, for `execute`. */
  const early = new Map<string, Promise<Submission>>();
  /** The SDK tool calls the harness held, as far as this process saw them. */
  const held = new Set<string>();
  approvals?.attach(run);

  const submit = (name: string, input: unknown) => submitCall(run, name, input, waitMs);
  const toResult = submissionResult;

  /**
   * The SDK's check before a call runs. It also runs again when the app answers an approval request (the
   * SDK re-checks an approved call, and denies it if the check says no): a call asked about before is
   * still one that needs the harness's approval, so it answers true without a second submission.
   */
  async function needsApproval(
    name: string,
    input: unknown,
    toolCallId: string,
    messages: readonly ModelMessage[],
  ) {
    if (held.has(toolCallId) || wasAskedAbout(messages, toolCallId)) return true;
    const submission = submit(name, input);
    early.set(toolCallId, submission);
    const s = await submission;
    if (!s.ok || s.outcome.status !== CallStatus.AWAITING_APPROVAL) return false;
    early.delete(toolCallId);
    held.add(toolCallId);
    approvals?.record({
      toolCallId,
      runId: run.runId,
      tool: name,
      stepIdx: s.outcome.stepIdx,
      idempotencyKey: s.outcome.idempotencyKey,
    });
    return true;
  }

  /**
   * A held call the SDK now runs (its approval request was answered): nothing is sent by this. The held
   * step's outcome is read from the log once settled; while it is open, the same call goes to the harness
   * again, which the run handle makes a retry of the tool's open step (the harness answers with the step's
   * state: still AWAITING_APPROVAL if no operator decided, whatever the SDK's response said).
   */
  async function resumeHeld(name: string, input: unknown, toolCallId: string): Promise<Submission> {
    const settled = await approvals?.settledOutcome(run.runId, { toolCallId, toolName: name, input });
    if (!settled) return submit(name, input);
    await run.sync(); // the handle may still count the step as open: it is settled in the log
    return { ok: true, outcome: settled };
  }

  const toolFor = (view: ToolView): Tool<unknown, unknown> =>
    tool<unknown, unknown>({
      description: describeForModel(view),
      inputSchema: jsonSchema<unknown>(view.inputSchema),
      ...(holdable(view)
        ? {
            needsApproval: (input: unknown, o: { toolCallId: string; messages: ModelMessage[] }) =>
              needsApproval(view.name, input, o.toolCallId, o.messages),
          }
        : {}),
      execute: async (
        input: unknown,
        { toolCallId, messages }: { toolCallId: string; messages: ModelMessage[] },
      ) => {
        const sent = early.get(toolCallId);
        if (sent) {
          early.delete(toolCallId);
          return toResult(await sent);
        }
        if (held.has(toolCallId) || wasAskedAbout(messages, toolCallId))
          return toResult(await resumeHeld(view.name, input, toolCallId));
        return toResult(await submit(view.name, input));
      },
    });

  return Object.fromEntries(chosen.map((t) => [t.name, toolFor(t)]));
}

/**
 * `sagaTools` over the tools the dispatcher lists (`GET /v1/tools`), read once now: give the same list to
 * every run of a process by calling `client.listTools()` once and `sagaTools` per run instead.
 */
export async function loadSagaTools(
  client: Pick<SagaClient, 'listTools'>,
  run: RunHandle,
  options: Omit<SagaToolsOptions, 'tools'> = {},
): Promise<ToolSet> {
  return sagaTools(run, { ...options, tools: await client.listTools() });
}

/** True when the conversation holds the SDK's approval request for this tool call: a resumed held call. */
function wasAskedAbout(messages: readonly ModelMessage[], toolCallId: string): boolean {
  return messages.some(
    (m) =>
      m.role === 'assistant' &&
      typeof m.content !== 'string' &&
      m.content.some((p) => p.type === 'tool-approval-request' && p.toolCallId === toolCallId),
  );
}
