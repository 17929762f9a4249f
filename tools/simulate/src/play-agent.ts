/**
 * The scripted agent (no model): plays one episode's task over a {@link ToolPort} with the episode's
 * policy mix. Its choices depend only on the episode (seeded) and on what it observes, so both harnesses
 * meet the same agent. It keeps a transcript (what it believes it did) and reports its own view of the
 * outcome; grading ignores both and reads the vendors' ledgers.
 */
import { sleep } from '../../../test/soak/seeded-random.js';
import { Policy } from './agent-policies.js';
import type { Episode } from './draw-episodes.js';
import { AgentReport, type Observation, type ToolPort, type TranscriptEntry } from './tool-port.js';

export interface AgentResult {
  readonly report: AgentReport;
  readonly transcript: readonly TranscriptEntry[];
  readonly calls: number;
  readonly notes: readonly string[];
}

/**
 * Why a budget of 20 s for an eager model and 3 tries for a patient one: an eager model retries until
 * something changes and gives up when its turn budget runs out, a patient one reads back (up to 20 s per
 * try, see the ports) and gives up after a few. A budget in time, not in tries, keeps the agent's
 * patience the same on a fast and a loaded machine.
 */
const EAGER_BUDGET_MS = 20_000;
const PATIENT_ATTEMPTS = 3;
/** Why 300 ms: a model's turn between a tool's answer and its next call (an eager retry is one turn). */
const MODEL_TURN_MS = 300;
/**
 * The eager model's tries end with its 20 s budget alone ("for up to 20 s", docs/simulation.md): the cap is
 * as many turns as the budget holds, so it never ends the tries first. It was 30, which at a 300 ms turn
 * plus the call's own time ended them after about 11 s, before a Jira create that never arrived is sent
 * again (Jira's 14 s commit horizon plus the lag): the agent gave up on tasks agent-saga was about to
 * finish (`pnpm simulate --seed 12`, episodes #113 and #435, `dropped`).
 */
const EAGER_MAX_ATTEMPTS = Math.ceil(EAGER_BUDGET_MS / MODEL_TURN_MS);
/** Why 1 s: a patient model's further pause before trying again. */
const PATIENT_PAUSE_MS = 1_000;

type WriteOutcome =
  | { readonly kind: 'done'; readonly ref: string | null }
  | { readonly kind: 'refused' | 'gave_up' | 'stuck'; readonly why: string };

export async function playAgent(episode: Episode, port: ToolPort): Promise<AgentResult> {
  const has = (p: Policy) => episode.policies.includes(p);
  const transcript: TranscriptEntry[] = [];
  const notes: string[] = [];
  let calls = 0;
  let crashed = false;

  const call = async (i: number, attempt: number, reworded: boolean): Promise<Observation> => {
    const w = episode.writes[i]!;
    calls += 1;
    return port.call(i, w.tool, w.args(attempt, reworded));
  };

  /** What the agent makes of one observation: an outcome, or undefined to try again. */
  const judge = async (i: number, obs: Observation): Promise<WriteOutcome | undefined> => {
    switch (obs.kind) {
      case 'done':
      case 'duplicate':
        return { kind: 'done', ref: obs.ref };
      case 'refused':
        return { kind: 'refused', why: obs.message };
      case 'needs_person':
        return { kind: 'stuck', why: obs.message };
      case 'silence':
        if (!has(Policy.SILENCE_IS_SUCCESS)) return undefined;
        notes.push(`read "${obs.message.slice(0, 160)}" from ${episode.writes[i]!.tool} as success`);
        return { kind: 'done', ref: null };
      case 'error':
        return undefined;
      case 'pending': {
        if (has(Policy.EAGER_RETRY)) return undefined;
        const back = await port.readBack(i);
        return back.kind === 'pending' || back.kind === 'silence' ? undefined : judge(i, back);
      }
      default: {
        const never: never = obs;
        throw new Error(`unknown observation ${JSON.stringify(never)}`);
      }
    }
  };

  const doWrite = async (i: number): Promise<WriteOutcome> => {
    const w = episode.writes[i]!;
    const eager = has(Policy.EAGER_RETRY);
    const attempts = eager ? EAGER_MAX_ATTEMPTS : PATIENT_ATTEMPTS;
    const until = Date.now() + EAGER_BUDGET_MS;
    for (let attempt = 1; attempt <= attempts && (!eager || Date.now() < until); attempt++) {
      let obs = await call(i, attempt, has(Policy.REWORD));
      if (episode.crashAfterWrite === i && !crashed) {
        // The answer dies with the agent; the resumed agent's transcript says this write was not done.
        crashed = true;
        port.crash();
        notes.push(`crashed after calling ${w.tool}; resumed from the transcript`);
        obs = await call(i, 1, false);
      }
      const outcome = await judge(i, obs);
      if (outcome !== undefined) {
        if (outcome.kind === 'done')
          transcript.push({ write: i, tool: w.tool, args: w.args(attempt, false), ref: outcome.ref });
        return outcome;
      }
      await sleep(eager ? MODEL_TURN_MS : MODEL_TURN_MS + PATIENT_PAUSE_MS);
    }
    return {
      kind: 'gave_up',
      why: `${w.tool}: no outcome ${eager ? 'within the eager budget' : `after ${attempts} tries`}`,
    };
  };

  /** A `replan` agent forgets a write it did and plans it again, in other words, as a new step. */
  const replan = async (i: number): Promise<void> => {
    if (!has(Policy.REPLAN) || !episode.replans[i]) return;
    const obs = await call(i, 2, true);
    const w = episode.writes[i]!;
    if (obs.kind === 'done') transcript.push({ write: i, tool: w.tool, args: w.args(2, true), ref: obs.ref });
  };

  const run = async (i: number): Promise<WriteOutcome> => {
    const outcome = await doWrite(i);
    if (outcome.kind === 'done') await replan(i);
    return outcome;
  };

  /** The writes from the pivot on, proposed at once; the port waits for the person and the commit steps. */
  const commitPivot = async (
    from: number,
    propose: NonNullable<ToolPort['pivot']>,
  ): Promise<WriteOutcome> => {
    const commit = episode.writes
      .slice(from)
      .map((w, k) => ({ write: from + k, tool: w.tool, args: w.args(1, false) }));
    calls += 1;
    const obs = await propose(commit);
    if (obs.kind === 'done') {
      for (const c of commit) transcript.push({ ...c, ref: null });
      return { kind: 'done', ref: null };
    }
    if (obs.kind === 'refused') return { kind: 'refused', why: `the pivot: ${obs.message}` };
    if (obs.kind === 'needs_person') return { kind: 'stuck', why: `the pivot: ${obs.message}` };
    return { kind: 'gave_up', why: `the pivot: ${'message' in obs ? obs.message : obs.kind}` };
  };

  await port.start();
  // With a pivot the agent calls the writes before it itself, and proposes the rest (agent-saga only).
  const n = episode.pivotAt !== undefined && port.pivot ? episode.pivotAt : episode.writes.length;
  const outcomes: WriteOutcome[] = [];
  if (has(Policy.PARALLEL) && n > 1) {
    const first = await Promise.all(Array.from({ length: n - 1 }, (_, i) => run(i)));
    outcomes.push(...first);
    if (!first.some((o) => o.kind !== 'done')) outcomes.push(await run(n - 1));
  } else {
    for (let i = 0; i < n; i++) {
      const o = await run(i);
      outcomes.push(o);
      if (o.kind !== 'done') break;
    }
  }
  const propose = port.pivot?.bind(port);
  if (n < episode.writes.length && propose && !outcomes.some((o) => o.kind !== 'done'))
    outcomes.push(await commitPivot(n, propose));
  const failed = outcomes.find((o) => o.kind !== 'done');
  if (failed === undefined) {
    await port.finish();
    return { report: AgentReport.SUCCESS, transcript, calls, notes };
  }
  const why = 'why' in failed ? failed.why : '';
  notes.push(`${failed.kind}: ${why}`);
  await port.undo(`the task cannot be finished (${failed.kind}: ${why}); undo it`, transcript);
  return {
    report: failed.kind === 'refused' ? AgentReport.ROLLED_BACK : AgentReport.FAILED,
    transcript,
    calls,
    notes,
  };
}
