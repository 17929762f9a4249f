/**
 * The naive harness follows the agent-saga harness's pace: with both harnesses asked for, the naive one
 * starts the episode at position i of the list only once agent-saga has started it, so the two share the
 * machine evenly over the whole run.
 *
 * Why: unpaced, the naive harness (no roles, no waits for lookups) played its 2,000 episodes in the first
 * minute or so of the run while agent-saga played its first few hundred, and those few hundred met a
 * machine running two harnesses at full tilt; the rest met one. Every agent-saga miss of two 2,000-episode
 * runs was among those first episodes (docs/simulation.md: "all 20 are among the first 580 episodes" on
 * 3 December 2026; #18 and #46 of seed 20268 on 6 December 2026), eager agents whose 20 s ran out on a
 * machine the simulator itself had doubled the load of. Paced, each harness's episodes meet the same
 * machine from start to end, and the naive harness still plays the same episodes in the same run.
 *
 * The leader (agent-saga, in the simulation's process) says how many episodes it has started; the follower
 * (the naive harness, in `play-naive.ts`'s process) reads those counts as lines on its stdin. When the
 * leader's line ends (it finished, or failed), the follower plays the rest at its own pace.
 */
import type { Readable } from 'node:stream';

/** The flag of `play-naive.ts` that makes it follow the counts on its stdin. */
export const PACED_BY_STDIN = '--paced-by-stdin';

/** The follower's side: each episode's start waits for {@link FollowerPace.wait}. */
export interface FollowerPace {
  /** Resolves once the leader has started the episode at `position` (0-based) of the shared list. */
  wait(position: number): Promise<void>;
}

/** A pace that lets everything through: a harness that plays alone. */
export const UNPACED: FollowerPace = { wait: () => Promise.resolve() };

/** A pace that moves when {@link PaceCounter.allow} is told how many episodes the leader has started. */
export interface PaceCounter extends FollowerPace {
  /** The leader has started `started` episodes (a lower count than one already told changes nothing). */
  allow(started: number): void;
  /** The leader is gone: every wait resolves. */
  release(): void;
}

export function createPaceCounter(): PaceCounter {
  let allowed = 0;
  let waiting: { readonly position: number; readonly go: () => void }[] = [];
  const wake = () => {
    const ready = waiting.filter((w) => w.position < allowed);
    waiting = waiting.filter((w) => w.position >= allowed);
    for (const w of ready) w.go();
  };
  return {
    wait(position) {
      if (position < allowed) return Promise.resolve();
      return new Promise<void>((go) => waiting.push({ position, go }));
    },
    allow(started) {
      if (started <= allowed) return;
      allowed = started;
      wake();
    },
    release() {
      allowed = Number.POSITIVE_INFINITY;
      wake();
    },
  };
}

/**
 * The follower's pace read from `input`: one decimal count per line (the leader's started episodes); the
 * end of `input`, or an error on it, releases every wait.
 */
export function paceFromLines(input: Readable): FollowerPace {
  const pace = createPaceCounter();
  let partial = '';
  input.setEncoding('utf8');
  input.on('data', (text: string) => {
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    const last = lines.at(-1);
    if (last !== undefined && /^\d+$/.test(last.trim())) pace.allow(Number(last.trim()));
  });
  input.once('end', () => pace.release());
  input.once('error', () => pace.release());
  return pace;
}

/** The leader's side: the count of episodes it has started, passed on to whoever follows. */
export interface LeaderPace {
  /** The leader has started `n` episodes. */
  readonly started: (n: number) => void;
  /** The leader is done (or failed): its followers play the rest at their own pace. */
  readonly end: () => void;
  /**
   * `line` is given the count so far at once, then each new count; `done` once the leader ends (at once
   * when it already has). Returns a function that stops it.
   */
  follow(line: (count: number) => void, done: () => void): () => void;
}

export function createLeaderPace(): LeaderPace {
  let count = 0;
  let ended = false;
  const followers = new Set<{ readonly line: (n: number) => void; readonly done: () => void }>();
  return {
    started(n) {
      if (n <= count) return;
      count = n;
      for (const f of followers) f.line(count);
    },
    end() {
      if (ended) return;
      ended = true;
      for (const f of followers) f.done();
      followers.clear();
    },
    follow(line, done) {
      if (ended) {
        done();
        return () => undefined;
      }
      const f = { line, done };
      followers.add(f);
      line(count);
      return () => followers.delete(f);
    },
  };
}
