/**
 * The scripted agent's policies, each a way models were seen to behave (the seeds' incident and the
 * preprint). An episode draws a mix; the scripted agent (play-agent.ts) reads it.
 *
 * - `eager_retry`: any error, timeout or "pending" answer is retried at the next turn (300 ms), for up to
 *   20 s, instead of three patient tries that read back first.
 * - `reword`: every retry words the arguments anew (other text, keys reordered, a harmless optional field).
 * - `silence_is_success`: a timeout, a reset or an empty answer is taken for success.
 * - `replan`: after a write succeeded, the agent forgets and plans the same action again as a new step.
 * - `resume_after_crash`: the agent crashes right after one write was sent, before its transcript recorded
 *   the answer, and resumes from its transcript (which says the write was not done).
 * - `parallel`: the writes before the last are called at the same time.
 */
import type { Random } from '../../../test/soak/seeded-random.js';

export const Policy = {
  EAGER_RETRY: 'eager_retry',
  REWORD: 'reword',
  SILENCE_IS_SUCCESS: 'silence_is_success',
  REPLAN: 'replan',
  RESUME_AFTER_CRASH: 'resume_after_crash',
  PARALLEL: 'parallel',
} as const;
export type Policy = (typeof Policy)[keyof typeof Policy];
export const POLICIES: readonly Policy[] = Object.values(Policy);

/** Why 0.3: about two policies per episode, so every pair meets often in a few hundred episodes. */
const EACH_PROBABILITY = 0.3;

/** A seeded mix: each policy with probability 0.3, at least one. */
export function drawPolicies(random: Random): readonly Policy[] {
  const mix = POLICIES.filter(() => random.next() < EACH_PROBABILITY);
  return mix.length > 0 ? mix : [random.pick(POLICIES)];
}
