/**
 * How many episodes the simulation keeps in flight, sized to the machine it runs on: a closed loop on the
 * episodes' own settle times (TCP Vegas's idea: compare what a round takes now with the least it took).
 *
 * Why not a fixed number: an episode mostly waits (tool timeouts, Jira's 14 s commit horizon, the search
 * lag), so more in flight gives more episodes an hour — until the cores are the bound. Past that knee only
 * the settle time grows, and an eager agent gives up after 20 s. The knee moves with the machine: on a fast
 * one 64 in flight settled in 3.9–4.7 s (median) and played 10,000 episodes in 32 minutes; on a slower one
 * (session of 6 December 2026, seed 20272, 1,000 episodes) 32, 48 and 64 in flight played the same
 * episodes an hour while the median settle time went 9.4 → 14.4 → 19.5 s and exactly once fell from
 * 100 % to 99.64 %; 64 over 10,000 episodes gave 81.89 %. The run queue and the CPU (8.5–9.1 runnable,
 * 95–96 % busy at all three) could not tell 32 from 64; the settle time could.
 *
 * The loop: episodes are measured in **cohorts** — the next {@link LaneSizing.cohort} episodes started
 * after the last decision, all at the current limit. Once most of a cohort has settled, its median settle
 * time (the unsettled ranked slowest) is compared with the **base**, the least cohort median seen (aged a
 * little at each decision, so one cohort of easy episodes does not hold the base down for the whole run):
 * near the base, the machine has room (add lanes); far above it, episodes are queueing for a core (shed
 * lanes); between, hold. Past an absolute bound the lanes never grow, and shed, whatever the base. A cohort, not the last N to settle: right after a change the first to settle are
 * the short episodes, which would read every change as a success.
 */

/** Lane counts and how the loop moves between them. */
export interface LaneSizing {
  readonly min: number;
  readonly start: number;
  readonly max: number;
  /** Episodes per cohort. */
  readonly cohort: number;
}

/** What one slot of the limit was taken under (given back with the settle time). */
export interface LaneTicket {
  /** The cohort it counts in; none once its cohort was full. */
  readonly cohort: number | undefined;
}

/** One decision of the loop, for the run's report. */
export interface LaneDecision {
  readonly at: number;
  readonly medianMs: number;
  readonly baseMs: number;
  readonly from: number;
  readonly to: number;
}

export interface Lanes {
  /** Resolves once fewer than the current limit are in flight; the slot is the caller's until `release`. */
  acquire(): Promise<LaneTicket>;
  /** The episode of `ticket` settled (or failed) after `settledMs`. */
  release(ticket: LaneTicket, settledMs: number): void;
  /** The limit at the start, and now. */
  readonly start: number;
  readonly limit: number;
  /** Every change of the limit so far, oldest first. */
  readonly decisions: readonly LaneDecision[];
}

/**
 * Why these bounds, whatever the base: an eager agent gives a write 20 s (play-agent.ts), and a cohort
 * median past 10 s means the slower half of the episodes is near that budget. On the slower machine 32 in
 * flight settled in 9.4 s (every episode that could succeed, once), 48 in 14.4 s, 64 in 19.5 s (99.64 %;
 * over 10,000 episodes 21.1 s and 81.89 %). The base alone can miss it: if the first cohorts were slow (a
 * mix heavy in Jira horizons, the roles still warming up), "near the base" is already past the knee.
 */
const GROW_ONLY_BELOW_MS = 10_000;
const SHRINK_PAST_MS = 14_000;

/**
 * Why these ratios: unloaded, a cohort's median swings ±15–20 % with the mix of its episodes (which fault
 * modes, which workflows), so "near the base" must tolerate that: up to 1.5× it adds a third more lanes.
 * On the slower machine 32 in flight settled at about 1.5× what 16 did and 64 at 3×, with the same
 * episodes an hour from 32 up: 1.9× is past the knee, and sheds a quarter of the lanes.
 */
const GROW_BELOW = 1.5;
const SHRINK_ABOVE = 1.9;
const GROW_BY = 4 / 3;
const SHRINK_BY = 3 / 4;
/** The base rises 2 % at each decision unless a cohort confirms it. */
const BASE_AGES_BY = 1.02;
/** A cohort is judged once this share of it has settled (its last few may be held by a horizon). */
const JUDGED_AT = 0.75;

/** A limit that never moves: `--concurrency C`. */
export function fixedLanes(limit: number): Lanes {
  return createLanes({ min: limit, start: limit, max: limit, cohort: Number.POSITIVE_INFINITY });
}

/**
 * Why these defaults: 16 in flight is below the knee of every machine measured (the slower one settled in
 * under 8 s at 32), and a third more per cohort of 32 reaches 64 in five decisions, about a minute on the
 * fast machine.
 */
export const ADAPTIVE_START = 16;
export const ADAPTIVE_MIN = 8;
export const ADAPTIVE_COHORT = 32;

export function adaptiveLanes(max: number, onChange?: (d: LaneDecision) => void): Lanes {
  const start = Math.min(ADAPTIVE_START, max);
  return createLanes({ min: Math.min(ADAPTIVE_MIN, start), start, max, cohort: ADAPTIVE_COHORT }, onChange);
}

export function createLanes(
  sizing: LaneSizing,
  onChange?: (d: LaneDecision) => void,
  now: () => number = Date.now,
): Lanes {
  let limit = sizing.start;
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const decisions: LaneDecision[] = [];
  let base: number | undefined;
  // The cohort being filled (episodes started since the last decision) and what it has settled in.
  let cohortId = 0;
  let cohortStarted = 0;
  const settled: number[] = [];

  const admit = () => {
    while (inFlight < limit && waiting.length > 0) {
      inFlight += 1;
      waiting.shift()?.();
    }
  };

  const ticket = (): LaneTicket => {
    if (cohortStarted >= sizing.cohort) return { cohort: undefined };
    cohortStarted += 1;
    return { cohort: cohortId };
  };

  const judge = () => {
    const times = [...settled].sort((a, b) => a - b);
    // The unsettled rank slowest: the median is the middle of all started, settled or not.
    const median = times[Math.floor(sizing.cohort / 2)] ?? times.at(-1) ?? 0;
    base = base === undefined ? median : Math.min(base * BASE_AGES_BY, median);
    const from = limit;
    if (median >= base * SHRINK_ABOVE || median >= SHRINK_PAST_MS)
      limit = Math.max(sizing.min, Math.floor(limit * SHRINK_BY));
    else if (median <= base * GROW_BELOW && median <= GROW_ONLY_BELOW_MS)
      limit = Math.min(sizing.max, Math.ceil(limit * GROW_BY));
    if (limit !== from) {
      const decision = { at: now(), medianMs: median, baseMs: base, from, to: limit };
      decisions.push(decision);
      onChange?.(decision);
    }
    cohortId += 1;
    cohortStarted = 0;
    settled.length = 0;
    admit();
  };

  return {
    acquire() {
      if (inFlight < limit) {
        inFlight += 1;
        return Promise.resolve(ticket());
      }
      return new Promise<LaneTicket>((go) => waiting.push(() => go(ticket())));
    },
    release(t, settledMs) {
      inFlight -= 1;
      if (t.cohort === cohortId) {
        settled.push(settledMs);
        if (cohortStarted >= sizing.cohort && settled.length >= Math.ceil(sizing.cohort * JUDGED_AT)) judge();
      }
      admit();
    },
    start: sizing.start,
    get limit() {
      return limit;
    },
    decisions,
  };
}

/** One change of the lanes, as the run prints it. */
export function describeLaneChange(d: LaneDecision): string {
  return (
    `lanes ${d.from} → ${d.to} (cohort median ${(d.medianMs / 1000).toFixed(1)} s, ` +
    `least ${(d.baseMs / 1000).toFixed(1)} s)`
  );
}

/** One line on how the lanes moved over a run: where they started, ended, and their range. */
export function describeLanes(lanes: Lanes): string {
  const d = lanes.decisions;
  if (d.length === 0) return `lanes: ${lanes.limit} in flight throughout`;
  const all = [lanes.start, ...d.map((x) => x.to)];
  return (
    `lanes: ${lanes.start} at the start, ${lanes.limit} at the end, ${Math.min(...all)}–${Math.max(...all)} ` +
    `over ${d.length} changes (last: cohort median ${(d.at(-1)!.medianMs / 1000).toFixed(1)} s, ` +
    `base ${(d.at(-1)!.baseMs / 1000).toFixed(1)} s)`
  );
}
