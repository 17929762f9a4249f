/**
 * The naive harness played in a process of its own (`play-naive.ts`), its sandbox with it, while the
 * agent-saga harness plays in this one: both harnesses at once, without one event loop serving both
 * sandboxes and both sets of agents.
 *
 * Why: with both in one process at 64 episodes in flight, on two cores under other work, that process
 * answered the vendors' requests late — every vendor's calls timed out for ten seconds and more at once
 * (measured 2 December 2026, 2,000 episodes): a Jira create read from its socket after the lookups that
 * had already found nothing, past the commit horizon the simulation declares for its own vendor. The
 * sandbox broke the contract, not agent-saga, but the run counted a second ticket against agent-saga. Its
 * own process keeps the agent-saga sandbox's answers prompt.
 *
 * The child prints one JSON line: each episode's index, record (without the episode, which holds functions)
 * and grade; the episodes are drawn again here from the same seed (draw-episodes.ts: the same whatever the
 * count) and put back by index.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Episode } from './draw-episodes.js';
import { PACED_BY_STDIN, type LeaderPace } from './follow-leader-pace.js';
import type { EpisodeGrade, EpisodeRecord } from './grade-episode.js';
import type { SimulateOptions } from './simulate-options.js';
import type { GradedEpisode } from './summarize-grades.js';

const CHILD_ENTRY = 'tools/simulate/src/play-naive.ts';
/** Output of the child kept for an error message: its last lines. */
const STDERR_KEPT = 4_000;

/** One graded episode as the child prints it: the episode by its index. */
export interface PlayedElsewhere {
  readonly index: number;
  readonly record: Omit<EpisodeRecord, 'episode'>;
  readonly grade: EpisodeGrade;
}

/** The child's answer: this code's own output, so only the index it is put back by is checked in detail. */
const isObject = (v: unknown) => typeof v === 'object' && v !== null;
const answerSchema = z.array(
  z.object({
    index: z.number().int().min(0),
    record: z.custom<Omit<EpisodeRecord, 'episode'>>(isObject),
    grade: z.custom<EpisodeGrade>(isObject),
  }),
);

/** What the child prints: every graded episode, its episode left out (it holds functions). */
export function toPlayedElsewhere(graded: readonly GradedEpisode[]): PlayedElsewhere[] {
  return graded.map(({ record: { episode, ...rest }, grade }) => ({
    index: episode.index,
    record: rest,
    grade,
  }));
}

/**
 * Plays `episodes` through the naive harness in a child process; the graded episodes, in order. With a
 * `leader`, the child starts each episode only once the leader has (its counts go to the child's stdin).
 */
export async function runNaiveInOwnProcess(
  episodes: readonly Episode[],
  options: SimulateOptions,
  repoRoot: string,
  say: (line: string) => void,
  leader?: LeaderPace,
): Promise<readonly GradedEpisode[]> {
  const args = [
    ...(leader ? [PACED_BY_STDIN] : []),
    ...['--harness', 'naive', '--episodes', String(episodes.length), '--seed', String(options.seed)],
    ...['--concurrency', String(options.concurrency)],
    // The same episodes as the agent-saga harness: the listed ones, when the run names them.
    ...(options.only ? ['--only', options.only.join(',')] : []),
    // The same episodes for the model (the child reads OPENAI_API_KEY and OPENAI_MODEL from the same env).
    ...(options.realModel ? ['--real-model', String(options.realModel.episodes)] : []),
  ];
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (done, fail) => {
      const child = spawn(process.execPath, ['--import', 'tsx', resolve(repoRoot, CHILD_ENTRY), ...args], {
        cwd: repoRoot,
        env: process.env,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      // A child that has exited closes its stdin: a count written after that is of no use to anyone.
      child.stdin.on('error', () => undefined);
      const unfollow = leader?.follow(
        (count) => child.stdin.write(`${count}\n`),
        () => child.stdin.end(),
      );
      if (!leader) child.stdin.end();
      // However this process ends (the other harness failed, a signal), the child ends with it.
      const kill = () => child.kill('SIGKILL');
      process.once('exit', kill);
      let out = '';
      let err = '';
      let partial = '';
      // Decoded as UTF-8 streams: a character split between two chunks stays whole.
      child.stdout.setEncoding('utf8');
      child.stderr.setEncoding('utf8');
      child.stdout.on('data', (text: string) => (out += text));
      child.stderr.on('data', (text: string) => {
        err = (err + text).slice(-STDERR_KEPT);
        const lines = (partial + text).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) say(line);
      });
      child.once('error', fail);
      child.once('close', (c) => {
        unfollow?.();
        process.off('exit', kill);
        done({ code: c, stdout: out, stderr: err });
      });
    },
  );
  if (code !== 0) throw new Error(`the naive harness's process exited ${String(code)}:\n${stderr}`);
  const played = answerSchema.parse(JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]'));
  const byIndex = new Map(episodes.map((e) => [e.index, e]));
  return played.map((p) => {
    const episode = byIndex.get(p.index);
    if (!episode) throw new Error(`the naive harness's process graded an episode not drawn: #${p.index}`);
    return { record: { ...p.record, episode }, grade: p.grade };
  });
}
