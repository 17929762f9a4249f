/**
 * The model agent's seat at each harness (play-model-agent.ts): the tools a model is given for an episode,
 * and how its held calls are answered.
 *
 * - agent-saga: `@agent-saga/ai-sdk`'s `sagaTools` over the episode's run, as an app gives them to a model:
 *   keys, retries of an open step, replanned duplicates refused, irreversible calls held through the SDK's
 *   approval flow (`createSagaApprovals`) until the simulation's operators decide them. The run is the
 *   port's (the model agent creates it by the port's `start`, completes or unwinds it by `finish`, `undo`).
 * - naive: the same connectors, each tool call the naive port's (its argument-hash key, no log, its
 *   process crash), the answer told to the model as the naive harness sees it; its undo walks the calls the
 *   model was told succeeded.
 */
import { createSagaApprovals, sagaTools } from '@agent-saga/ai-sdk';
import type { SagaClient, ToolView } from '@agent-saga/client';
import { describeTool } from '@agent-saga/core';
import { jsonSchema, tool, type ModelMessage, type ToolSet } from 'ai';
import { runIdOf } from './agent-saga-port.js';
import type { Episode } from './draw-episodes.js';
import type { NaiveToolbox } from './naive-harness.js';
import type { ModelSeat } from './play-model-agent.js';
import type { Observation, ToolPort, TranscriptEntry } from './tool-port.js';

/**
 * Why 5 s a call and 60 s for a decision: a call's outcome is usually known within a second or two (the
 * model is told PENDING otherwise, and may ask again); the operators decide a held email within seconds,
 * and a model waiting longer than a minute for a person is told nothing more by waiting.
 */
const CALL_WAIT_MS = 5_000;
const DECISION_WAIT_MS = 60_000;

export function agentSagaModelSeat(
  saga: SagaClient,
  episode: Episode,
  views: readonly ToolView[],
): ModelSeat {
  const approvals = createSagaApprovals(saga);
  const names = new Set<string>(episode.writes.map((w) => w.tool));
  let tools: ToolSet | undefined;
  return {
    tools: () =>
      (tools ??= sagaTools(saga.run(runIdOf(episode)), {
        tools: views.filter((v) => names.has(v.name)),
        approvals,
        waitMs: CALL_WAIT_MS,
      })),
    async decide(content) {
      const responses = await approvals.responses(content as Parameters<typeof approvals.responses>[0], {
        timeoutMs: DECISION_WAIT_MS,
      });
      return responses.length === 0 ? null : ({ role: 'tool', content: responses } satisfies ModelMessage);
    },
    // agent-saga undoes from its log, never from what the model believes.
    transcript: () => [],
  };
}

/** What the model reads of a naive call: the answer as the naive harness got it. */
function answerOf(obs: Observation): Record<string, unknown> {
  switch (obs.kind) {
    case 'done':
    case 'duplicate':
      return { status: 'done', id: obs.ref };
    default:
      return { status: obs.kind, message: obs.message };
  }
}

export function naiveModelSeat(box: NaiveToolbox, episode: Episode, port: ToolPort): ModelSeat {
  const transcript: TranscriptEntry[] = [];
  const tools: ToolSet = {};
  episode.writes.forEach((w, write) => {
    const connector = box.tools.get(w.tool);
    if (!connector) throw new Error(`the naive harness has no tool ${w.tool}`);
    const view = describeTool(connector);
    tools[w.tool] = tool<unknown, unknown>({
      description: view.description ?? w.tool,
      inputSchema: jsonSchema<unknown>(view.inputSchema),
      async execute(input) {
        const args = (input ?? {}) as Record<string, unknown>;
        const obs = await port.call(write, w.tool, args);
        if (obs.kind === 'done') transcript.push({ write, tool: w.tool, args, ref: obs.ref });
        return answerOf(obs);
      },
    });
  });
  return { tools: () => tools, transcript: () => transcript };
}
