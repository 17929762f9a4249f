/**
 * One simulation: the episodes drawn from the seed, played by each harness asked for (both at once, each
 * against a sandbox of its own, so their ledgers never mix; the naive one then in a process of its own),
 * graded, and summarised.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { LanguageModel } from 'ai';
import { stepKey } from '@agent-saga/core';
import { DEFAULT_CREDENTIALS, sandboxConnectorEnv, startSandbox } from '@agent-saga/sandbox';
import { agentSagaPort, runIdOf } from './agent-saga-port.js';
import { startAgentSagaStack } from './agent-saga-stack.js';
import { drawSelectedEpisodes, type Episode } from './draw-episodes.js';
import { createLeaderPace, UNPACED, type FollowerPace } from './follow-leader-pace.js';
import { argumentHashKey, createNaiveToolbox, naivePort } from './naive-harness.js';
import { runNaiveInOwnProcess } from './naive-in-own-process.js';
import { agentSagaModelSeat, naiveModelSeat } from './model-seats.js';
import { modelEpisodes, type ModelAgent, type ModelSeat } from './play-model-agent.js';
import { runHarness } from './run-harness.js';
import {
  adaptiveLanes,
  describeLaneChange,
  describeLanes,
  fixedLanes,
  type Lanes,
} from './size-lanes-to-machine.js';
import { SEARCH_LAG_MS, STRIPE_TIMEOUT_MS } from './sim-timings.js';
import { Harness, type SimulateOptions } from './simulate-options.js';
import { summarize, type GradedEpisode, type SimulationSummary } from './summarize-grades.js';
import type { ToolPort } from './tool-port.js';

export interface SimulationResult {
  readonly summary: SimulationSummary;
  /** Every graded episode, per harness (for a person reading a failure). */
  readonly graded: ReadonlyMap<Harness, readonly GradedEpisode[]>;
}

/**
 * The naive harness in this process, against a sandbox of its own; `pace` holds each episode until the
 * agent-saga harness has started it (follow-leader-pace.ts), when both play.
 */
export async function runNaive(
  episodes: readonly Episode[],
  options: SimulateOptions,
  say: (l: string) => void,
  pace: FollowerPace = UNPACED,
  given?: LanguageModel,
): Promise<readonly GradedEpisode[]> {
  const sandbox = await startSandbox({
    settings: { stripeSearchLagMs: SEARCH_LAG_MS, jiraSearchLagMs: SEARCH_LAG_MS },
  });
  const env = {
    ...sandboxConnectorEnv(
      { urls: sandbox.urls, credentials: DEFAULT_CREDENTIALS },
      { lagMs: SEARCH_LAG_MS, toolsModule: 'unused' },
    ),
    STRIPE_TIMEOUT_MS: String(STRIPE_TIMEOUT_MS),
  };
  const box = createNaiveToolbox(env, options.databaseUrl);
  const lanes = lanesOf(options, 'naive', say);
  const modelAgent = await modelAgentOf(options, episodes, given, (e, port) => naiveModelSeat(box, e, port));
  try {
    return await runHarness(episodes, {
      sandbox,
      port: (e) => naivePort(box, e),
      lookupKeyOf: (e, w) => argumentHashKey(e.writes[w]?.tool ?? '', e.writes[w]?.args(1, false)),
      lanes,
      progress: progressLine('naive', episodes.length, lanes, say),
      pace,
      ...(modelAgent ? { modelAgent } : {}),
    });
  } finally {
    await box.close();
    await sandbox.close();
  }
}

async function runAgentSaga(
  episodes: readonly Episode[],
  options: SimulateOptions,
  repoRoot: string,
  say: (l: string) => void,
  /** Called once the roles are up (or failed to come up). */
  started: () => void = () => undefined,
  /** Told how many episodes have started, after each start (the naive harness follows it). */
  episodesStarted?: (n: number) => void,
  given?: LanguageModel,
) {
  if (!options.databaseUrl || !options.redisUrl)
    throw new Error('the agent-saga harness needs DATABASE_URL and REDIS_URL');
  const stack = await startAgentSagaStack({
    repoRoot,
    databaseUrl: options.databaseUrl,
    redisUrl: options.redisUrl,
    seed: options.seed,
    concurrency: options.concurrency,
    keepLog: options.keepLog,
    say,
  }).finally(started);
  const lanes = lanesOf(options, 'agent-saga', say);
  try {
    const views = options.realModel ? await stack.saga.listTools() : [];
    const modelAgent = await modelAgentOf(options, episodes, given, (e) =>
      agentSagaModelSeat(stack.saga, e, views),
    );
    return await runHarness(episodes, {
      sandbox: stack.sandbox,
      port: (e) => agentSagaPort(stack.saga, e),
      // The step's key, as the dispatcher derives it: the write's index is its step index, unless a
      // parallel call took the index first (then the stale read never fires: a plain misleading 500).
      lookupKeyOf: (e, w) => stepKey(runIdOf(e), w, e.writes[w]?.tool ?? '', null),
      lanes,
      async openCases(list) {
        const open = await stack.openCases(list.map(runIdOf));
        return new Set(list.filter((e) => open.has(runIdOf(e))).map((e) => e.index));
      },
      progress: progressLine('agent-saga', episodes.length, lanes, say),
      ...(episodesStarted ? { started: episodesStarted } : {}),
      ...(modelAgent ? { modelAgent } : {}),
    });
  } finally {
    say(`  agent-saga ${describeLanes(lanes)}`);
    await stack.close();
  }
}

/**
 * How late this process (its sandbox, its agents) ran its callbacks: a sandbox that answers seconds late
 * holds every vendor's requests, and one held past Jira's declared commit horizon breaks the contract the
 * grading relies on (docs/simulation.md). Why 2 s: the horizon's allowance for a request's way to the vendor.
 */
const LATE_LOOP_MS = 2_000;

function eventLoopLine(lag: IntervalHistogram): string {
  const ms = (ns: number) => Math.round(ns / 1e6);
  const line = `  simulator event loop delay: p99 ${ms(lag.percentile(99))} ms, max ${ms(lag.max)} ms`;
  return ms(lag.max) > LATE_LOOP_MS
    ? `${line} (past ${LATE_LOOP_MS} ms: the sandbox may have held a request past Jira's commit horizon; fewer episodes in flight)`
    : line;
}

/**
 * The model agent of `--real-model` for one harness, seated by `seat` in the episodes it plays; none without
 * the flag. The model is OpenAI's, through the AI SDK's provider (which reads OPENAI_API_KEY), unless the
 * caller gives one (a test's scripted model).
 */
async function modelAgentOf(
  options: SimulateOptions,
  episodes: readonly Episode[],
  given: LanguageModel | undefined,
  seat: (episode: Episode, port: ToolPort) => ModelSeat,
): Promise<ModelAgent | undefined> {
  if (!options.realModel) return undefined;
  const model = given ?? (await import('@ai-sdk/openai')).openai(options.realModel.model);
  const plays = modelEpisodes(episodes, options.realModel.episodes);
  return { model, seatOf: (e, port) => (plays.has(e.index) ? seat(e, port) : undefined) };
}

/**
 * The lanes a harness plays in: sized to the machine unless the run fixed them. A naive harness that
 * follows agent-saga's pace is told the bound as a fixed number (naive-in-own-process.ts) and so never
 * starts more than agent-saga has.
 */
function lanesOf(options: SimulateOptions, name: string, say: (l: string) => void): Lanes {
  return options.adaptiveLanes
    ? adaptiveLanes(options.concurrency, (d) => say(`  ${name}: ${describeLaneChange(d)}`))
    : fixedLanes(options.concurrency);
}

/** A line every tenth of the run (and at the end), with the lanes in flight. */
function progressLine(name: string, total: number, lanes: Lanes, say: (l: string) => void) {
  const every = Math.max(1, Math.floor(total / 10));
  return (done: number) => {
    if (done % every === 0 || done === total)
      say(`  ${name}: ${done}/${total} episodes (${lanes.limit} in flight)`);
  };
}

export async function runSimulation(
  options: SimulateOptions,
  repoRoot: string,
  say: (line: string) => void,
  /** The model of `--real-model` in this process (a test's); else OpenAI's. The naive child uses OpenAI's. */
  model?: LanguageModel,
): Promise<SimulationResult> {
  const started = Date.now();
  const episodes = drawSelectedEpisodes(options.seed, options);
  // Both at once: the naive harness in a process of its own (naive-in-own-process.ts says why), started
  // once the agent-saga roles are up: its sandbox's ports are taken while the roles' free ports (picked,
  // then bound by each role) are still unbound, and one collided (EADDRINUSE) when both started together.
  // It follows agent-saga's pace, episode by episode (follow-leader-pace.ts says why).
  const both = options.harnesses.length > 1;
  const leader = createLeaderPace();
  let rolesUp: () => void = () => undefined;
  const rolesStarted = new Promise<void>((r) => (rolesUp = r));
  const lag = monitorEventLoopDelay({ resolution: 20 });
  lag.enable();
  const runs = options.harnesses.map(async (h): Promise<[Harness, readonly GradedEpisode[]]> => [
    h,
    h === Harness.NAIVE
      ? both
        ? await rolesStarted.then(() => runNaiveInOwnProcess(episodes, options, repoRoot, say, leader))
        : await runNaive(episodes, options, say, UNPACED, model)
      : await runAgentSaga(episodes, options, repoRoot, say, rolesUp, leader.started, model).finally(
          leader.end,
        ),
  ]);
  const graded = new Map(await Promise.all(runs));
  lag.disable();
  say(eventLoopLine(lag));
  return { summary: summarize(options.seed, episodes.length, graded, Date.now() - started), graded };
}
