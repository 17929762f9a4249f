/**
 * One simulation: the episodes drawn from the seed, played by each harness asked for (both at once, each
 * against a sandbox of its own, so their ledgers never mix), graded, and summarised.
 */
import { stepKey } from '@agent-saga/core';
import { DEFAULT_CREDENTIALS, sandboxConnectorEnv, startSandbox } from '@agent-saga/sandbox';
import { agentSagaPort, runIdOf } from './agent-saga-port.js';
import { startAgentSagaStack } from './agent-saga-stack.js';
import { drawEpisodes, type Episode } from './draw-episodes.js';
import { argumentHashKey, createNaiveToolbox, naivePort } from './naive-harness.js';
import { runHarness } from './run-harness.js';
import { SEARCH_LAG_MS, STRIPE_TIMEOUT_MS } from './sim-timings.js';
import { Harness, type SimulateOptions } from './simulate-options.js';
import { summarize, type GradedEpisode, type SimulationSummary } from './summarize-grades.js';

export interface SimulationResult {
  readonly summary: SimulationSummary;
  /** Every graded episode, per harness (for a person reading a failure). */
  readonly graded: ReadonlyMap<Harness, readonly GradedEpisode[]>;
}

async function runNaive(episodes: readonly Episode[], options: SimulateOptions, say: (l: string) => void) {
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
  try {
    return await runHarness(episodes, {
      sandbox,
      port: (e) => naivePort(box, e),
      lookupKeyOf: (e, w) => argumentHashKey(e.writes[w]?.tool ?? '', e.writes[w]?.args(1, false)),
      concurrency: options.concurrency,
      progress: progressLine('naive', episodes.length, say),
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
) {
  if (!options.databaseUrl || !options.redisUrl)
    throw new Error('the agent-saga harness needs DATABASE_URL and REDIS_URL');
  const stack = await startAgentSagaStack({
    repoRoot,
    databaseUrl: options.databaseUrl,
    redisUrl: options.redisUrl,
    seed: options.seed,
    say,
  });
  try {
    return await runHarness(episodes, {
      sandbox: stack.sandbox,
      port: (e) => agentSagaPort(stack.saga, e),
      // The step's key, as the dispatcher derives it: the write's index is its step index, unless a
      // parallel call took the index first (then the stale read never fires: a plain misleading 500).
      lookupKeyOf: (e, w) => stepKey(runIdOf(e), w, e.writes[w]?.tool ?? '', null),
      concurrency: options.concurrency,
      async openCases(list) {
        const open = await stack.openCases(list.map(runIdOf));
        return new Set(list.filter((e) => open.has(runIdOf(e))).map((e) => e.index));
      },
      progress: progressLine('agent-saga', episodes.length, say),
    });
  } finally {
    await stack.close();
  }
}

/** A line every tenth of the run (and at the end). */
function progressLine(name: string, total: number, say: (l: string) => void) {
  const every = Math.max(1, Math.floor(total / 10));
  return (done: number) => {
    if (done % every === 0 || done === total) say(`  ${name}: ${done}/${total} episodes`);
  };
}

export async function runSimulation(
  options: SimulateOptions,
  repoRoot: string,
  say: (line: string) => void,
): Promise<SimulationResult> {
  const started = Date.now();
  const episodes = drawEpisodes(options.seed, options.episodes);
  const runs = options.harnesses.map(async (h): Promise<[Harness, readonly GradedEpisode[]]> => [
    h,
    h === Harness.NAIVE
      ? await runNaive(episodes, options, say)
      : await runAgentSaga(episodes, options, repoRoot, say),
  ]);
  const graded = new Map(await Promise.all(runs));
  return { summary: summarize(options.seed, episodes.length, graded, Date.now() - started), graded };
}
