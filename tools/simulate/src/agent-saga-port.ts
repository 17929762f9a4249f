/**
 * The agent-saga harness's side of one episode: the agent talks to the api with `@agent-saga/client` as a
 * user's agent does — one run per episode, every call through a run handle (`saga.run(id)`), which sends
 * the step index the log says (a retry of an open step keeps its index; a replanned action takes a new one
 * and is refused as a duplicate). Undo is `unwind`; the log, never the transcript, says what to compensate.
 * A workflow with a pivot runs under the policy `requirePivot`: the agent proposes the writes from the pivot
 * on as one pivot, the simulated person decides it (approve-held-emails.ts), and the commit steps run by
 * themselves. An id an argument names (a capture's hold) is read from the log, not from what the agent was
 * told.
 */
import {
  ApiErrorCode,
  ConflictError,
  DuplicateOperationError,
  RunStatus,
  SagaApiError,
  ServiceUnavailableError,
  ToolOutcomeUnknown,
  UnexpectedResponseError,
  type CallOutcome,
  type RunHandle,
  type SagaClient,
} from '@agent-saga/client';
import { TERMINAL_RUN_STATUSES } from '@agent-saga/core';
import { sleep } from '../../../test/soak/seeded-random.js';
import type { Episode } from './draw-episodes.js';
import { resolveRefs } from './support-workflows.js';
import type { HarnessEnding, Observation, ToolPort } from './tool-port.js';

/** Why 2 s: a call waits this long for its outcome before the api answers INTENDED (the soak's choice). */
const WAIT_MS = 2_000;
/** Why 20 s: a patient read-back outlasts a lease (tool timeout 3 s + margin) and a lookup after the lag. */
const READ_BACK_MS = 20_000;
/** Why 60 s: a run's unwinding after an unknown step waits out its lease and the compensator's checks. */
const SETTLE_MS = 60_000;
const POLL_MS = 300;
/**
 * Why 30 s: how long a call refused before anything was sent (the balancer's 503 while both api replicas
 * restart, or a refused connection) is sent again before the agent is told; nothing was sent, so sending
 * again is safe.
 */
const REFUSED_RETRY_MS = 30_000;

/**
 * Why 120 s: a pivot waits for the person (a few hundred ms), then for its commit steps, each of which may
 * meet a fault and a recovery (a Jira-free commit, so no horizon; a late commit holds up to 12 s).
 */
const PIVOT_SETTLE_MS = 120_000;
/**
 * Why 120 s, as a pivot: a capture called beside its hold waits for the hold's step to settle, which under
 * a fault and 64 episodes in flight on two cores took longer than a 20 s read-back (measured: capture
 * refused for want of an id in 5 of 200 episodes, none for a reason of the harness's).
 */
const REF_WAIT_MS = PIVOT_SETTLE_MS;
/** The run statuses that end a pivot's wait, and what the agent makes of each. */
const PIVOT_ENDING: Readonly<Record<string, Observation['kind']>> = {
  COMPLETED: 'done',
  COMMITTED_WITH_REPAIR: 'done',
  COMPENSATING: 'refused',
  COMPENSATED: 'refused',
  PARTIALLY_COMPENSATED: 'refused',
  MANUAL_INTERVENTION: 'needs_person',
};

/**
 * Why 20 s: the longest one read waits for a step or a run to move (`waitMs`, a long poll); a wait longer
 * than the agent's own deadline is cut to it.
 */
const LONG_POLL_MS = 20_000;

const SETTLED_STEP = new Set(['CONFIRMED', 'FAILED', 'REJECTED', 'MANUAL_INTERVENTION']);
const TERMINAL: readonly string[] = TERMINAL_RUN_STATUSES;

export const runIdOf = (episode: Episode): string => `run-${episode.ids.tag}`;

/**
 * What the agent makes of a FAILED step: the real system said no and nothing happened. A refusal the
 * vendor answered (a vendor `status`: a decline, an order the warehouse will not ship) ends the task; one
 * with no vendor answer — the vendor broke off part-way and left nothing done ("Stripe left PaymentIntent
 * pi_… in requires_confirmation; no money moved", settled from the lookup by key) — is an error a model
 * tries again, as a new call: the failed step is settled, so the run handle gives it the next index.
 */
function observeFailed(error: unknown): Observation {
  const message = JSON.stringify(error);
  const vendorStatus = (error as { status?: unknown } | null)?.status;
  return typeof vendorStatus === 'number' ? { kind: 'refused', message } : { kind: 'error', message };
}

/** Whether the agent tries a write again after this step of it: FAILED with no vendor answer. */
function triedAgain(step: { readonly status: string; readonly error?: unknown }): boolean {
  return step.status === 'FAILED' && observeFailed(step.error).kind === 'error';
}

function observe(outcome: CallOutcome): Observation {
  switch (outcome.status) {
    case 'CONFIRMED':
      return { kind: 'done', ref: outcome.externalRef };
    case 'FAILED':
      return observeFailed(outcome.error);
    case 'REJECTED':
      return { kind: 'refused', message: outcome.message };
    case 'PURE':
      return { kind: 'done', ref: null };
    default:
      return { kind: 'pending', message: outcome.status };
  }
}

/**
 * Whether the call was refused before anything was sent: a 503 (the balancer found no replica up, or the
 * dispatcher is draining or cannot reach Postgres: both decided nothing) or a refused connection to an api
 * without a balancer. The agent is told it as an error, not a silence: a model reads "503 Service
 * Unavailable" or "connection refused" as "not done".
 */
function connectionRefused(e: unknown): boolean {
  if (e instanceof ServiceUnavailableError && e.status === 503) return true;
  for (let c: unknown = e; c instanceof Error; c = c.cause)
    if ((c as { code?: unknown }).code === 'ECONNREFUSED') return true;
  return false;
}

/**
 * The earlier step a STEP_UNRESOLVED refusal names when it refused a new step because that step's outcome
 * is unknown ("retry that step … until it is resolved before starting step N"): nothing was written, and
 * the call can be made again once that step settles. Undefined for any other error, and for the refusal
 * that carries a settled outcome the caller had not seen (that one is an answer, not a wait).
 */
function unresolvedBlocker(e: unknown): number | undefined {
  if (!(e instanceof ConflictError) || e.code !== ApiErrorCode.STEP_UNRESOLVED || e.outcome) return undefined;
  const idx = e.details.stepIdx;
  return typeof idx === 'number' ? idx : undefined;
}

function observeError(e: unknown): Observation {
  if (e instanceof ToolOutcomeUnknown) return { kind: 'pending', message: e.message };
  if (e instanceof DuplicateOperationError) return { kind: 'duplicate', ref: e.externalRef ?? null };
  if (e instanceof ServiceUnavailableError && connectionRefused(e))
    return { kind: 'error', message: e.message };
  if (e instanceof ServiceUnavailableError || e instanceof UnexpectedResponseError)
    return { kind: 'silence', message: e.message };
  if (e instanceof SagaApiError) return { kind: 'error', message: `${e.code}: ${e.message}` };
  throw e;
}

export function agentSagaPort(saga: SagaClient, episode: Episode): ToolPort {
  const runId = runIdOf(episode);
  let handle: RunHandle = saga.run(runId);
  const stepOf = new Map<number, number>();

  /**
   * Waits up to `until` (at most {@link LONG_POLL_MS}) for the step at `idx` to settle, asking the api once
   * (a long poll); the step as then read, or undefined when the api did not answer. An answer that came back
   * early without a settled step (its run stopped going forward) is followed by a pause, as is a failure,
   * so that a caller asking again does not spin.
   */
  const waitForStep = async (idx: number, until: number) => {
    const asked = Date.now();
    const waitMs = Math.max(0, Math.min(LONG_POLL_MS, until - asked));
    const s = await saga.getStep(runId, idx, { waitMs }).catch(() => undefined);
    if ((s === undefined || !SETTLED_STEP.has(s.status)) && Date.now() - asked < Math.min(waitMs, POLL_MS))
      await sleep(POLL_MS);
    return s;
  };

  /** Waits up to `until` for the run's status to leave `whileStatus` (a long poll), as `waitForStep`. */
  const waitForRun = async (until: number, whileStatus?: readonly RunStatus[]) => {
    const asked = Date.now();
    const waitMs = Math.max(0, Math.min(LONG_POLL_MS, until - asked));
    const run = await saga.getRun(runId, { waitMs, whileStatus }).catch(() => undefined);
    if (run === undefined && Date.now() - asked < POLL_MS) await sleep(POLL_MS);
    return run;
  };

  const readStep = async (write: number): Promise<Observation> => {
    const idx = stepOf.get(write);
    if (idx === undefined) return { kind: 'silence', message: 'the call was never written' };
    const deadline = Date.now() + READ_BACK_MS;
    while (Date.now() < deadline) {
      const s = await waitForStep(idx, deadline);
      if (s && SETTLED_STEP.has(s.status)) {
        if (s.status === 'CONFIRMED') return { kind: 'done', ref: s.externalRef };
        if (s.status === 'MANUAL_INTERVENTION')
          return { kind: 'needs_person', message: 'MANUAL_INTERVENTION' };
        if (s.status === 'FAILED') return observeFailed(s.error);
        return { kind: 'refused', message: s.status };
      }
    }
    return { kind: 'pending', message: 'not settled yet' };
  };

  /**
   * The arguments with every earlier write's id read from the log, once that write's step has settled (a
   * `parallel` agent calls the capture beside the hold, and a model cannot send an id before it has read
   * it); null when that step did not confirm, the run stopped running, or nothing settled within
   * {@link REF_WAIT_MS}.
   */
  const fromLog = async (args: Readonly<Record<string, unknown>>) => {
    if (resolveRefs(args, () => '') === null) return args;
    // Most often every step named is confirmed already: a read of each of those steps is enough, and
    // costs the api one row where the run's view is every step (7 of 10 `GET /v1/runs/{id}` were these).
    const named = await readNamedSteps(args);
    if (named !== null) return named;
    const deadline = Date.now() + REF_WAIT_MS;
    for (;;) {
      const run = await saga.getRun(runId).catch(() => undefined);
      let open = run === undefined || run.status === 'RUNNING';
      let unsettled = false;
      /** A step the agent has an index for and waits on: the api can hold the next read until it moves. */
      let waitOn: number | undefined;
      const resolved = resolveRefs(args, (w) => {
        const idx = stepOf.get(w);
        const s = run?.steps.find((x) => x.stepIdx === idx);
        if (s?.status === 'CONFIRMED') return s.externalRef;
        // A write the agent will try again (a FAILED step it reads as an error) is not settled either.
        if (s === undefined || !SETTLED_STEP.has(s.status) || triedAgain(s)) unsettled = true;
        if (s !== undefined && !SETTLED_STEP.has(s.status)) waitOn ??= s.stepIdx;
        return null;
      });
      open = open && unsettled;
      if (resolved !== null || !open || Date.now() > deadline) return resolved;
      if (waitOn === undefined) await sleep(POLL_MS);
      else await waitForStep(waitOn, deadline);
    }
  };

  /**
   * The arguments with every earlier write's id, read step by step (`GET …/steps/{idx}`, no wait); null
   * unless every step they name has an index and is confirmed, for {@link fromLog} to wait on the run.
   */
  const readNamedSteps = async (args: Readonly<Record<string, unknown>>) => {
    const refs = new Map<number, string | null>();
    resolveRefs(args, (w) => {
      refs.set(w, null);
      return '';
    });
    for (const w of refs.keys()) {
      const idx = stepOf.get(w);
      if (idx === undefined) return null;
      const s = await saga.getStep(runId, idx).catch(() => undefined);
      if (s?.status !== 'CONFIRMED') return null;
      refs.set(w, s.externalRef);
    }
    return resolveRefs(args, (w) => refs.get(w) ?? null);
  };

  /** Proposes the pivot (again while the api does not answer), then waits for the run to settle. */
  const pivot: NonNullable<ToolPort['pivot']> = async (commit) => {
    const steps = [];
    for (const c of commit) {
      const args = await fromLog(c.args);
      if (args === null) return { kind: 'refused', message: `${c.tool}: the id it names is not in the log` };
      steps.push({ tool: c.tool, args });
    }
    const deadline = Date.now() + PIVOT_SETTLE_MS;
    for (;;) {
      try {
        await saga.pivot(runId, { commit: steps, summary: `Refund and reship order ${episode.ids.orderId}` });
        break;
      } catch (e) {
        // A step before the pivot still settling (STEP_UNRESOLVED), or the api restarting: ask again.
        const again = e instanceof ConflictError || e instanceof ServiceUnavailableError;
        if (!again || Date.now() > deadline) return observeError(e);
        const run = await saga.getRun(runId).catch(() => undefined);
        if (run && run.status !== 'RUNNING') break; // an earlier proposal landed; its answer was lost
        await sleep(POLL_MS);
      }
    }
    while (Date.now() < deadline) {
      // Held while the pivot waits for its person and while its commit steps run.
      const run = await waitForRun(deadline, [RunStatus.AWAITING_APPROVAL, RunStatus.RUNNING]);
      const kind = run ? PIVOT_ENDING[run.status] : undefined;
      if (kind === 'done') return { kind, ref: null };
      if (kind === 'refused' || kind === 'needs_person') return { kind, message: run?.status ?? '' };
    }
    return { kind: 'pending', message: 'the pivot did not settle' };
  };

  return {
    pivot,
    async start() {
      for (let i = 0; ; i++) {
        try {
          await saga.createRun({
            runId,
            metadata: { simulate: episode.ids.tag },
            ...(episode.pivotAt === undefined ? {} : { policy: { requirePivot: true } }),
          });
          return;
        } catch (e) {
          // Why 120 tries: an api restarted by a process fault takes a few seconds to boot on two shared cores.
          if (i >= 120 || !(e instanceof ServiceUnavailableError)) throw e;
          await sleep(500);
        }
      }
    },
    async call(write, tool, given) {
      const args = await fromLog(given);
      if (args === null) return { kind: 'refused', message: `${tool}: the id it names is not in the log` };
      const until = Date.now() + REFUSED_RETRY_MS;
      const blockedUntil = Date.now() + READ_BACK_MS;
      for (;;) {
        try {
          const outcome = await handle.call(tool, args, { waitMs: WAIT_MS });
          if ('stepIdx' in outcome) stepOf.set(write, outcome.stepIdx);
          return observe(outcome);
        } catch (e) {
          if (e instanceof ToolOutcomeUnknown) stepOf.set(write, e.stepIdx);
          // Nothing was sent: the agent's HTTP client connects again, as any client does on a restart.
          if (connectionRefused(e) && Date.now() < until) {
            await sleep(POLL_MS);
            continue;
          }
          // Refused, nothing written, until an earlier step's unknown outcome is resolved: the agent does
          // what the refusal says (waits for that step, which its other call is retrying) and calls again.
          const blocker = unresolvedBlocker(e);
          if (blocker !== undefined && Date.now() < blockedUntil) {
            await waitForStep(blocker, blockedUntil);
            continue;
          }
          return observeError(e);
        }
      }
    },
    readBack: readStep,
    crash() {
      // A new process: a fresh handle reads the step count and the open steps from the log.
      handle = saga.run(runId);
    },
    async finish() {
      const deadline = Date.now() + SETTLE_MS;
      while (Date.now() < deadline) {
        try {
          await saga.complete(runId);
          return;
        } catch (e) {
          // A step still settling (STEP_UNRESOLVED) or an api that did not answer: ask again.
          if (!(e instanceof ConflictError || e instanceof ServiceUnavailableError)) throw e;
          const run = await saga.getRun(runId).catch(() => undefined);
          if (run && run.status !== 'RUNNING') return;
          await sleep(POLL_MS);
        }
      }
    },
    async undo(reason) {
      const deadline = Date.now() + SETTLE_MS;
      for (;;) {
        try {
          await saga.unwind(runId, reason.slice(0, 500));
          return;
        } catch (e) {
          if (e instanceof ConflictError) return; // already unwinding or terminal
          // The api restarting (a process fault): ask again; an unwind is idempotent.
          if (!(e instanceof ServiceUnavailableError) || Date.now() > deadline) throw e;
          await sleep(POLL_MS);
        }
      }
    },
    async settle(): Promise<HarnessEnding> {
      const deadline = Date.now() + SETTLE_MS;
      let status: string | null = null;
      while (Date.now() < deadline) {
        // Held until the run ends (the default of `whileStatus`: its open statuses).
        const run = await waitForRun(deadline);
        status = run?.status ?? status;
        if (status !== null && TERMINAL.includes(status)) break;
      }
      return { runStatus: status };
    },
  };
}
