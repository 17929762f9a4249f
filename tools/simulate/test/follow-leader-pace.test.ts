/**
 * The naive harness's pace (follow-leader-pace.ts): an episode's start waits until the leader has started
 * it, the counts travel as lines (as they do to `play-naive.ts`'s stdin), and a leader that ends lets the
 * follower play the rest.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLeaderPace, paceFromLines, type FollowerPace } from '../src/follow-leader-pace.js';

/** Which of `positions` have been let through so far. */
function trackWaits(pace: FollowerPace, positions: readonly number[]) {
  const through = new Set<number>();
  for (const p of positions) void pace.wait(p).then(() => through.add(p));
  return through;
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('the naive harness follows agent-saga, episode by episode', () => {
  it('lets position i through only once the leader has started i + 1 episodes, counts read from lines', async () => {
    const input = new PassThrough();
    const through = trackWaits(paceFromLines(input), [0, 1, 2, 5]);
    await turn();
    expect([...through]).toEqual([]);

    input.write('1\n2');
    await turn();
    // "2" is not a whole line yet: only position 0 may start.
    expect([...through].sort()).toEqual([0]);

    input.write('\n');
    await turn();
    expect([...through].sort()).toEqual([0, 1]);

    input.write('3\n1\n');
    await turn();
    // A lower count after a higher one (a line out of order) takes nothing back and lets nothing more.
    expect([...through].sort()).toEqual([0, 1]);
    input.write('4\n');
    await turn();
    expect([...through].sort()).toEqual([0, 1, 2]);

    input.end();
    await turn();
    // The leader is gone (done or failed): the rest play at the follower's own pace.
    expect([...through].sort()).toEqual([0, 1, 2, 5]);
  });

  it("passes the leader's counts to a follower that joins late, and ends it when the leader ends", () => {
    const leader = createLeaderPace();
    leader.started(3);
    leader.started(2);
    const lines: number[] = [];
    let ended = 0;
    leader.follow(
      (n) => lines.push(n),
      () => (ended += 1),
    );
    leader.started(4);
    expect(lines).toEqual([3, 4]);
    leader.end();
    leader.end();
    expect(ended).toBe(1);

    let lateEnded = 0;
    leader.follow(
      () => lines.push(-1),
      () => (lateEnded += 1),
    );
    expect({ lines, lateEnded }).toEqual({ lines: [3, 4], lateEnded: 1 });
  });
});
