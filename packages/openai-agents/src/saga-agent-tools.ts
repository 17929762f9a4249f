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
import { tool, type FunctionTool, type RunContext, type ToolInputParameters } from '@openai/agents';
import type { SagaAgentApprovals } from './saga-agent-approvals.js';

/** Which tools, which may be held, how long a call waits (see `AgentToolOptions`), and the approvals. */
export interface SagaAgentToolsOptions extends AgentToolOptions {
  /**
   * The bridge to agent-saga's approvals (`createSagaAgentApprovals(client)`): it learns which SDK calls
   * the harness holds, and turns operators' decisions into the SDK's `state.approve` / `state.reject`.
   * Without it the run still interrupts on held calls, and the app reads the harness's approvals itself.
   * Which calls go through it: `holdable` (see `sagaAgentTools`).
   */
  readonly approvals?: SagaAgentApprovals;
}

/** The SDK's non-strict JSON Schema parameters (its `JsonObjectSchemaNonStrict`, not exported by name). */
type JsonParameters = Extract<ToolInputParameters, { readonly additionalProperties: true }>;

/** A function tool of the Agents SDK as `sagaAgentTools` makes them: JSON Schema in, JSON text out. */
export type SagaAgentTool = FunctionTool<unknown, JsonParameters, string>;

/**
 * The run's tools as Agents SDK function tools (`tool()`): each one's `parameters` is the harness's JSON
 * Schema, non-strict (the harness parses the arguments and names a bad field; a strict schema would make
 * the SDK rewrite the harness's optional fields), and its `execute` goes through `run.call`, so the run
 * handle, never the model, decides which step a call is, and a call repeated after a lost answer is a
 * retry of the same step with the same idempotency key.
 *
 * What the model reads, as JSON text (the builders are `@agent-saga/client`'s `tool-answers.ts`): a pure
 * tool's result as it is; CONFIRMED with its result and external ref; UNKNOWN and INTENDED as a result
 * that says the outcome is not known yet, that the harness is asking the real system by the same key, and
 * that the same call again returns the resolved outcome without acting twice (the SDK's own default would
 * hand a timed-out or failed call back as an error text, which says none of that); FAILED and REJECTED
 * as results that say nothing happened; a refusal (DUPLICATE_OPERATION, STEP_UNRESOLVED, BUDGET_EXCEEDED,
 * INVALID_ARGS, any other code) as a result with its code, message, field and what to do. Thrown out of
 * `run()`, to the app (`errorFunction: null`; the SDK wraps it in its `ToolCallError`, whose `error` is the
 * client's `UnauthorizedError` or `NotFoundError`): a bad token, an unknown run.
 *
 * Held calls use the SDK's interruptions: for a holdable tool, `needsApproval` sends the call to the
 * harness (the call is made once either way, only earlier). If the harness holds it, `needsApproval` is
 * true and the run ends with an interruption for it; the held step's outcome is read by `execute` once
 * the app approves the interruption, which it does from the operator's decision in agent-saga (see
 * `SagaAgentApprovals`). If the harness does not hold it, its outcome is kept for `execute`, which
 * returns it without a second call.
 */
export function sagaAgentTools(run: RunHandle, options: SagaAgentToolsOptions): SagaAgentTool[] {
  const { approvals, holdable = holdableByDefault, waitMs } = options;
  const chosen = chooseTools(options, 'sagaAgentTools');
  /** Outcomes of calls sent from `needsApproval` and not held, by the SDK's call id, for `execute`. */
  const early = new Map<string, Promise<Submission>>();
  /** The SDK calls the harness held, as far as this process saw them. */
  const held = new Set<string>();
  approvals?.attach(run);

  const submit = (name: string, input: unknown) => submitCall(run, name, input, waitMs);
  const toText = (s: Submission): string => JSON.stringify(submissionResult(s)) ?? 'null';
  const isHeld = (callId: string) => held.has(callId) || approvals?.held(callId) !== undefined;

  /**
   * The SDK's check before a call runs. It runs again when the app resumes a state whose interruption it
   * has not answered: a call held before is still held unless its step settled meanwhile (an operator
   * decided and the app resumed without `applyDecisions`); then its outcome is kept for `execute`, which
   * the SDK calls next, and nothing is sent again.
   */
  async function needsApproval(name: string, input: unknown, callId: string): Promise<boolean> {
    if (isHeld(callId)) {
      const settled = await approvals?.settledOutcome(run.runId, { callId, toolName: name, input });
      if (!settled) return true;
      await run.sync(); // the handle may still count the step as open: it is settled in the log
      early.set(callId, Promise.resolve({ ok: true, outcome: settled }));
      return false;
    }
    const submission = submit(name, input);
    early.set(callId, submission);
    const s = await submission;
    if (!s.ok || s.outcome.status !== CallStatus.AWAITING_APPROVAL) return false;
    early.delete(callId);
    held.add(callId);
    approvals?.record({
      callId,
      runId: run.runId,
      tool: name,
      stepIdx: s.outcome.stepIdx,
      idempotencyKey: s.outcome.idempotencyKey,
    });
    return true;
  }

  /**
   * A held call the SDK now runs (its interruption was approved): nothing is sent by this. The held
   * step's outcome is read from the log once settled; while it is open, the same call goes to the harness
   * again, which the run handle makes a retry of the tool's open step (the harness answers with the step's
   * state: still AWAITING_APPROVAL if no operator decided, whatever the SDK's approval said).
   */
  async function resumeHeld(name: string, input: unknown, callId: string): Promise<Submission> {
    const settled = await approvals?.settledOutcome(run.runId, { callId, toolName: name, input });
    if (!settled) return submit(name, input);
    await run.sync(); // the handle may still count the step as open: it is settled in the log
    return { ok: true, outcome: settled };
  }

  async function execute(
    name: string,
    input: unknown,
    context: RunContext | undefined,
    callId: string | undefined,
  ): Promise<string> {
    if (callId === undefined) return toText(await submit(name, input)); // invoked outside a run loop
    const sent = early.get(callId);
    if (sent) {
      early.delete(callId);
      return toText(await sent);
    }
    // Approved in the SDK: a call this process saw held, or one of a state resumed from elsewhere.
    if (isHeld(callId) || context?.isToolApproved({ toolName: name, callId }) === true)
      return toText(await resumeHeld(name, input, callId));
    return toText(await submit(name, input));
  }

  const toolFor = (view: ToolView): SagaAgentTool =>
    tool({
      name: view.name,
      description: describeForModel(view),
      // The harness's schema as it is: the SDK parses the JSON and passes it on without validating it.
      parameters: view.inputSchema as unknown as JsonParameters,
      strict: false,
      // Errors that reach here are the app's (a bad token, a missing run): thrown out of run(), not shown
      // to the model as text. Everything the model can act on is already a result.
      errorFunction: null,
      ...(holdable(view)
        ? {
            needsApproval: (_ctx: RunContext, input: unknown, callId?: string) =>
              callId === undefined ? Promise.resolve(false) : needsApproval(view.name, input, callId),
          }
        : {}),
      execute: (input: unknown, context?: RunContext, details?: { toolCall?: { callId: string } }) =>
        execute(view.name, input, context, details?.toolCall?.callId),
    }) as SagaAgentTool;

  return chosen.map(toolFor);
}

/**
 * `sagaAgentTools` over the tools the dispatcher lists (`GET /v1/tools`), read once now: give the same
 * list to every run of a process by calling `client.listTools()` once and `sagaAgentTools` per run.
 */
export async function loadSagaAgentTools(
  client: Pick<SagaClient, 'listTools'>,
  run: RunHandle,
  options: Omit<SagaAgentToolsOptions, 'tools'> = {},
): Promise<SagaAgentTool[]> {
  return sagaAgentTools(run, { ...options, tools: await client.listTools() });
}
