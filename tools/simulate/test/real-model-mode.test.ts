/**
 * `pnpm simulate --real-model N` without a key: a model on the AI SDK's mock (task-following-model.ts)
 * reads the task as a real model would, and plays four episodes of CI's seed through each harness's tools —
 * agent-saga's through `@agent-saga/ai-sdk` (keys, the reconciler, the held email through the SDK's
 * approval flow and the simulation's operators), the naive harness's through its argument-hash keys —
 * graded from the ledgers like the scripted agent's. The same model, the same faults: agent-saga gets each
 * task done once; the naive harness doubles the ticket whose answer was lost.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { drawSelectedEpisodes } from '../src/draw-episodes.js';
import { describeTask, modelEpisodes } from '../src/play-model-agent.js';
import { runSimulation } from '../src/run-simulation.js';
import { parseSimulateOptions } from '../src/simulate-options.js';
import { taskFollowingModel } from './task-following-model.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const SEED = '20261';
/**
 * #7 a hold, a reship, the capture of the hold (the model fills the hold's id in) and an email; #9 a ticket
 * whose answer is lost (lost_ack: made, then the connection reset); #33 a ticket and an email; #88 a ticket
 * answered 500 after it was made (misleading_500) and an email. None can be refused by the warehouse.
 */
const ONLY = '7,9,33,88';

const optionsFor = (harness: string) =>
  parseSimulateOptions(
    ['--harness', harness, '--seed', SEED, '--only', ONLY, '--real-model', '4', '--concurrency', '4'],
    REPO_ROOT,
    { ...process.env, OPENAI_API_KEY: 'unused: the mock model is given' },
  );

describe('the real-model mode', () => {
  it('tells the model the task in words, with each write exact, and leaves the pivot to the scripted agent', () => {
    const [hold] = drawSelectedEpisodes(20_261, { episodes: 1, only: [7] });
    const task = describeTask(hold!);
    expect(task).toContain(`Order ${hold!.ids.orderId} of customer ${hold!.ids.customerId}`);
    expect(task).toMatch(/^4\. capture_payment with \{.*"<the id step 2 returned>".*\}$/m);
    const some = drawSelectedEpisodes(20_261, { episodes: 40 });
    const plays = modelEpisodes(some, 20);
    // The first 20 without a pivot: #10, #16 and #21 are pivots, so the model plays the others up to #22.
    expect(some[10]?.pivotAt).toBeDefined();
    expect(some[16]?.pivotAt).toBeDefined();
    expect([...plays]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 17, 18, 19, 20, 22]);
  });

  it('agent-saga: the model gets every task done exactly once, the held emails through the SDK approvals', async () => {
    const lines: string[] = [];
    const { summary, graded } = await runSimulation(
      optionsFor('agent-saga'),
      REPO_ROOT,
      (l) => lines.push(l),
      taskFollowingModel(),
    );
    const byModel = summary.byPolicy.real_model?.['agent-saga'];
    expect(Object.keys(summary.byPolicy)).toEqual(['real_model']);
    expect(byModel, lines.join('\n')).toMatchObject({ episodes: 4, duplicates: 0, lost: 0, exactlyOnce: 4 });
    // Each email went through the SDK's approval request, decided by the simulation's operators.
    const notes = (i: number) =>
      graded.get('agent-saga')?.find((g) => g.record.episode.index === i)?.record.notes;
    for (const withEmail of [7, 33, 88]) expect(notes(withEmail)).toContain('calls held for a person: 1');
    expect(notes(9)).toContain('the model: RESULT: success');
  }, 240_000);

  it('naive: the same model doubles the ticket whose answer was lost', async () => {
    const { summary, graded } = await runSimulation(
      optionsFor('naive'),
      REPO_ROOT,
      () => undefined,
      taskFollowingModel(),
    );
    expect(summary.byPolicy.real_model?.naive?.episodes).toBe(4);
    const lostAck = graded.get('naive')?.find((g) => g.record.episode.index === 9);
    expect(lostAck?.record.byModel).toBe(true);
    expect(lostAck?.grade.findings).toContain('2 tickets');
  }, 240_000);
});
