/**
 * Seeded episodes: the same seed gives the same episodes (workflow, refusal, faults, policy mix, crash
 * point), so both harnesses play the very same ones and a run can be replayed.
 */
import { seededRandom, type Random } from '../../../test/soak/seeded-random.js';
import { drawPolicies, Policy } from './agent-policies.js';
import { appliesTo, drawDelayMs, FAULT_MODES, FaultMode, type EpisodeFault } from './fault-modes.js';
import {
  episodeIds,
  hasReship,
  pivotAt,
  WORKFLOWS,
  writesOf,
  type EpisodeIds,
  type PlannedWrite,
  type Workflow,
} from './support-workflows.js';

export interface Episode {
  readonly index: number;
  readonly ids: EpisodeIds;
  readonly workflow: Workflow;
  readonly writes: readonly PlannedWrite[];
  /**
   * The first write proposed at the pivot (agent-saga: every write from here on is staged at once and runs
   * after one approval), or undefined for a workflow without one.
   */
  readonly pivotAt: number | undefined;
  /** The warehouse refuses the reship: the task cannot succeed and must be undone. */
  readonly refused: boolean;
  readonly faults: readonly EpisodeFault[];
  readonly policies: readonly Policy[];
  /** With `resume_after_crash`: the write after whose call the agent crashes. */
  readonly crashAfterWrite: number | undefined;
  /** Per write, whether a `replan` agent plans it again after it succeeded (seeded, so both harnesses agree). */
  readonly replans: readonly boolean[];
}

const SKUS = ['TEE-L', 'MUG-BLUE', 'CAP-RED', 'SOCK-6'];
/** Why 0.2: one episode in five must be undone, as in a support queue where reships are sometimes refused. */
const REFUSAL_PROBABILITY = 0.2;
/** Why 0.25: a second fault in one episode in four ("one or more fault modes"). */
const SECOND_FAULT_PROBABILITY = 0.25;

function drawFault(writes: readonly PlannedWrite[], random: Random): EpisodeFault {
  const mode = random.pick(FAULT_MODES);
  const candidates = writes.map((w, i) => ({ w, i })).filter(({ w }) => appliesTo(mode, w));
  const target = candidates.length > 0 ? random.pick(candidates) : { w: writes[0]!, i: 0 };
  const applies = appliesTo(mode, target.w);
  const delayMs = applies ? drawDelayMs(mode, target.w, random) : undefined;
  return {
    mode: applies ? mode : FaultMode.NONE,
    write: target.i,
    ...(delayMs === undefined ? {} : { delayMs }),
  };
}

/** Draws episode `index` of a simulation seeded with `seed` (independent of how many are drawn). */
export function drawEpisode(seed: number, index: number): Episode {
  // One stream per episode, so episode 17 is the same whether 20 or 10,000 are drawn.
  const random = seededRandom((Math.imul(seed, 2_654_435_761) ^ Math.imul(index + 1, 40_503)) >>> 0);
  const workflow = random.pick(WORKFLOWS);
  const ids = episodeIds(seed, index, random.pick(SKUS));
  const writes = writesOf(workflow, ids);
  const refused = hasReship(workflow) && random.next() < REFUSAL_PROBABILITY;
  const faults = [drawFault(writes, random)];
  if (random.next() < SECOND_FAULT_PROBABILITY) {
    const second = drawFault(writes, random);
    // One fault per write: a second on the same write would never fire (both are `nth: 1`).
    if (second.write !== faults[0]!.write) faults.push(second);
  }
  const policies = drawPolicies(random);
  const pivot = pivotAt(workflow);
  // The agent's own crash falls on a write it calls itself: after a pivot, the harness makes the calls.
  const crashAfterWrite = policies.includes(Policy.RESUME_AFTER_CRASH)
    ? random.int(0, (pivot ?? writes.length) - 1)
    : undefined;
  const replans = writes.map(() => random.next() < 0.5);
  return {
    index,
    ids,
    workflow,
    writes,
    pivotAt: pivot,
    refused,
    faults,
    policies,
    crashAfterWrite,
    replans,
  };
}

export function drawEpisodes(seed: number, count: number): readonly Episode[] {
  return Array.from({ length: count }, (_, i) => drawEpisode(seed, i));
}

/**
 * The episodes a run plays: the listed ones (`--only`) when there are, else the first `episodes`. Both
 * harnesses draw through this, the naive one in its own process too, so they play the same episodes.
 */
export function drawSelectedEpisodes(
  seed: number,
  selection: { readonly episodes: number; readonly only?: readonly number[] | undefined },
): readonly Episode[] {
  return selection.only
    ? selection.only.map((i) => drawEpisode(seed, i))
    : drawEpisodes(seed, selection.episodes);
}
