/**
 * Plays every episode against one harness and grades them: the episodes' customers and orders seeded in
 * the harness's own sandbox, each episode's faults armed as it starts (scoped to its tag, so episodes in
 * flight together never share one), as many at a time as its {@link Lanes} allow, then the ledger read
 * once at the end and every episode graded from it.
 */
import type { RunningSandbox } from '@agent-saga/sandbox';
import { sleep } from '../../../test/soak/seeded-random.js';
import type { Episode } from './draw-episodes.js';
import { faultSpecsOf, type FaultMode } from './fault-modes.js';
import { gradeEpisode, type EpisodeRecord } from './grade-episode.js';
import type { FollowerPace } from './follow-leader-pace.js';
import { partitionLedger, partOf } from './partition-ledger.js';
import { playAgent } from './play-agent.js';
import { playModelAgent, type ModelAgent } from './play-model-agent.js';
import type { GradedEpisode } from './summarize-grades.js';
import type { Lanes } from './size-lanes-to-machine.js';
import type { PortFactory } from './tool-port.js';

/**
 * Why 1 s past the last hold: a held request (late commit) commits when its delay ends, and a redelivered
 * one is resent after the first answer; the ledger is read once the last of them has landed.
 */
const QUIET_MS = 1_000;

export function seedEpisodes(sandbox: RunningSandbox, episodes: readonly Episode[]): void {
  sandbox.admin.seed({
    customers: episodes.map((e) => ({
      id: e.ids.customerId,
      email: e.ids.email,
      defaultPaymentMethod: 'pm_card_visa',
    })),
    orders: episodes.map((e) => ({
      id: e.ids.orderId,
      customerId: e.ids.customerId,
      items: [{ sku: e.ids.sku, quantity: 1 }],
      eligibleForReship: !e.refused,
    })),
  });
}

export interface HarnessRun {
  readonly sandbox: RunningSandbox;
  readonly port: PortFactory;
  /** How many episodes may be in flight at once (fixed, or sized to the machine as the run goes). */
  readonly lanes: Lanes;
  /** Run ids with an open case (agent-saga); none for the naive harness. */
  readonly openCases?: (episodes: readonly Episode[]) => Promise<ReadonlySet<number>>;
  readonly progress?: (done: number) => void;
  /** Waited before each episode starts (the naive harness following agent-saga's pace); none: no wait. */
  readonly pace?: FollowerPace;
  /** Told how many episodes have started, after each start (the leader's side of the pace). */
  readonly started?: (started: number) => void;
  /** A real model plays the episodes it has a seat for (`--real-model N`); the scripted agent the rest. */
  readonly modelAgent?: ModelAgent;
  /** The key this harness's read-back of write `write` searches by (scopes a stale read). */
  readonly lookupKeyOf: (episode: Episode, write: number) => string;
}

interface Played {
  readonly record: Omit<EpisodeRecord, 'openCase'>;
  /** When the last request a fault of this episode holds has surely been processed (epoch ms). */
  readonly quietAt: number;
}

async function playOne(episode: Episode, run: HarnessRun): Promise<Played> {
  const armed: { readonly id: string; readonly mode: FaultMode }[] = [];
  for (const fault of episode.faults) {
    const write = episode.writes[fault.write];
    if (!write) continue;
    const key = run.lookupKeyOf(episode, fault.write);
    for (const spec of faultSpecsOf(fault, write, episode.ids.tag, key))
      armed.push({ id: run.sandbox.admin.addFault(spec).id, mode: fault.mode });
  }
  const started = Date.now();
  const port = run.port(episode);
  const agent = run.modelAgent;
  const seat = agent?.seatOf(episode, port);
  const result =
    agent && seat ? await playModelAgent(episode, port, seat, agent.model) : await playAgent(episode, port);
  const ending = await port.settle();
  const settledAt = Date.now();
  // Done with: a fault that fired has done its work, and one that did not must not hit a later episode.
  const fired = new Set(
    run.sandbox.admin
      .faults()
      .filter((f) => f.fired > 0)
      .map((f) => f.id),
  );
  for (const { id } of armed) run.sandbox.admin.removeFault(id);
  const holds = Math.max(0, ...episode.faults.map((f) => f.delayMs ?? 0));
  // A mode fired when every sandbox fault it armed hit a request (a stale read arms two).
  const firedModes = [...new Set(armed.map((a) => a.mode))].filter((m) =>
    armed.filter((a) => a.mode === m).every((a) => fired.has(a.id)),
  );
  return {
    record: {
      episode,
      report: result.report,
      ending,
      settledMs: settledAt - started,
      firedModes,
      notes: result.notes,
      ...(seat ? { byModel: true } : {}),
    },
    quietAt: Math.max(settledAt, started + holds) + QUIET_MS,
  };
}

/**
 * Plays `episodes` in order, each once its pace lets it and a lane is free, and grades each from the
 * sandbox's ledger. The first episode that fails to play (the harness, not the agent) fails the run once
 * those in flight have ended.
 */
export async function runHarness(
  episodes: readonly Episode[],
  run: HarnessRun,
): Promise<readonly GradedEpisode[]> {
  seedEpisodes(run.sandbox, episodes);
  const played: Played[] = new Array<Played>(episodes.length);
  const inFlight: Promise<void>[] = [];
  let failure: { readonly error: unknown } | undefined;
  let done = 0;
  for (let i = 0; i < episodes.length && !failure; i++) {
    await run.pace?.wait(i);
    const ticket = await run.lanes.acquire();
    run.started?.(i + 1);
    const startedAt = Date.now();
    inFlight.push(
      playOne(episodes[i]!, run).then(
        (p) => {
          played[i] = p;
          run.lanes.release(ticket, p.record.settledMs);
          done += 1;
          run.progress?.(done);
        },
        (error: unknown) => {
          run.lanes.release(ticket, Date.now() - startedAt);
          failure ??= { error };
        },
      ),
    );
  }
  await Promise.all(inFlight);
  if (failure) throw failure.error;
  const quietAt = Math.max(0, ...played.map((p) => p.quietAt));
  await sleep(Math.max(0, quietAt - Date.now()));
  const parts = partitionLedger(run.sandbox.admin.ledger());
  const withCases = (await run.openCases?.(episodes)) ?? new Set<number>();
  return played.map(({ record: r }) => {
    const record: EpisodeRecord = { ...r, openCase: withCases.has(r.episode.index) };
    return { record, grade: gradeEpisode(record, partOf(parts, r.episode.ids.tag)) };
  });
}
