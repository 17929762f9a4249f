/**
 * Counts graded episodes per harness: the totals (the issue's `--json` shape: counts of episodes), and the
 * same counts broken down by fault mode and by policy. An episode counts under every fault mode it drew
 * and every policy of its mix, so the rows of a breakdown add up to more than the total.
 */
import type { Policy } from './agent-policies.js';
import type { FaultMode } from './fault-modes.js';
import type { EpisodeGrade, EpisodeRecord } from './grade-episode.js';
import type { Harness } from './simulate-options.js';

/** The row of `byPolicy` for the episodes a real model played (`--real-model`). */
export const REAL_MODEL = 'real_model';

/** The counts, per harness, exactly these keys. */
export interface HarnessTotals {
  readonly episodes: number;
  readonly duplicates: number;
  readonly lost: number;
  readonly exactlyOnce: number;
  readonly wrongCompensations: number;
  readonly reportedSuccessWhenWrong: number;
}

/** Beside the totals: how many could succeed, and how many of those were exactly once; settle times. */
export interface HarnessDetail {
  readonly canSucceed: number;
  readonly exactlyOnceOfCanSucceed: number;
  readonly settledMsMedian: number;
  readonly settledMsP95: number;
  /** Per fault mode: in how many episodes it was drawn, and in how many its faults hit a request. */
  readonly faultsFired: Partial<Record<FaultMode, { readonly drawn: number; readonly fired: number }>>;
}

export interface GradedEpisode {
  readonly record: EpisodeRecord;
  readonly grade: EpisodeGrade;
}

export interface SimulationSummary {
  readonly seed: number;
  readonly episodes: number;
  readonly totals: Partial<Record<Harness, HarnessTotals>>;
  readonly details: Partial<Record<Harness, HarnessDetail>>;
  readonly byFaultMode: Partial<Record<FaultMode, Partial<Record<Harness, HarnessTotals>>>>;
  /** Per policy of the scripted agent; the episodes a real model played under `real_model`. */
  readonly byPolicy: Partial<Record<Policy | typeof REAL_MODEL, Partial<Record<Harness, HarnessTotals>>>>;
  readonly durationMs: number;
}

export function countTotals(graded: readonly GradedEpisode[]): HarnessTotals {
  const count = (p: (g: EpisodeGrade) => boolean) => graded.filter((x) => p(x.grade)).length;
  return {
    episodes: graded.length,
    duplicates: count((g) => g.duplicate),
    lost: count((g) => g.lost),
    exactlyOnce: count((g) => g.exactlyOnce),
    wrongCompensations: count((g) => g.wrongCompensation),
    reportedSuccessWhenWrong: count((g) => g.reportedSuccessWhenWrong),
  };
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

export function detailOf(graded: readonly GradedEpisode[]): HarnessDetail {
  const can = graded.filter((g) => g.grade.canSucceed);
  const times = graded.map((g) => g.record.settledMs).sort((a, b) => a - b);
  const faultsFired: Partial<Record<FaultMode, { drawn: number; fired: number }>> = {};
  for (const g of graded)
    for (const mode of new Set(g.record.episode.faults.map((f) => f.mode))) {
      const row = (faultsFired[mode] ??= { drawn: 0, fired: 0 });
      row.drawn += 1;
      if (g.record.firedModes.includes(mode)) row.fired += 1;
    }
  return {
    faultsFired,
    canSucceed: can.length,
    exactlyOnceOfCanSucceed: can.filter((g) => g.grade.exactlyOnce).length,
    settledMsMedian: percentile(times, 0.5),
    settledMsP95: percentile(times, 0.95),
  };
}

/** Groups each harness's graded episodes under every key `keysOf` gives an episode. */
function breakdown<K extends string>(
  byHarness: ReadonlyMap<Harness, readonly GradedEpisode[]>,
  keysOf: (g: GradedEpisode) => readonly K[],
): Partial<Record<K, Partial<Record<Harness, HarnessTotals>>>> {
  const out: Partial<Record<K, Partial<Record<Harness, HarnessTotals>>>> = {};
  const keys = new Set<K>();
  for (const list of byHarness.values()) for (const g of list) for (const k of keysOf(g)) keys.add(k);
  for (const k of [...keys].sort()) {
    const row: Partial<Record<Harness, HarnessTotals>> = {};
    for (const [h, list] of byHarness) row[h] = countTotals(list.filter((g) => keysOf(g).includes(k)));
    out[k] = row;
  }
  return out;
}

export function summarize(
  seed: number,
  episodes: number,
  byHarness: ReadonlyMap<Harness, readonly GradedEpisode[]>,
  durationMs: number,
): SimulationSummary {
  const totals: Partial<Record<Harness, HarnessTotals>> = {};
  const details: Partial<Record<Harness, HarnessDetail>> = {};
  for (const [h, list] of byHarness) {
    totals[h] = countTotals(list);
    details[h] = detailOf(list);
  }
  return {
    seed,
    episodes,
    totals,
    details,
    byFaultMode: breakdown(byHarness, (g) => [...new Set(g.record.episode.faults.map((f) => f.mode))]),
    byPolicy: breakdown(byHarness, (g) => (g.record.byModel ? [REAL_MODEL] : g.record.episode.policies)),
    durationMs,
  };
}
