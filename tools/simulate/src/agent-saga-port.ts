/**
 * The agent-saga harness's side of one episode: the agent talks to the api with `@agent-saga/client` as a
 * user's agent does — one run per episode, every call through a run handle (`saga.run(id)`), which sends
 * the step index the log says (a retry of an open step keeps its index; a replanned action takes a new one
 * and is refused as a duplicate). Undo is `unwind`; the log, never the transcript, says what to compensate.
 */
import {
  ConflictError,
  DuplicateOperationError,
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
import type { HarnessEnding, Observation, ToolPort } from './tool-port.js';

/** Why 2 s: a call waits this long for its outcome before the api answers INTENDED (the soak's choice). */
const WAIT_MS = 2_000;
/** Why 20 s: a patient read-back outlasts a lease (tool timeout 3 s + margin) and a lookup after the lag. */
const READ_BACK_MS = 20_000;
/** Why 60 s: a run's unwinding after an unknown step waits out its lease and the compensator's checks. */
const SETTLE_MS = 60_000;
const POLL_MS = 300;

const SETTLED_STEP = new Set(['CONFIRMED', 'FAILED', 'REJECTED', 'MANUAL_INTERVENTION']);
const TERMINAL: readonly string[] = TERMINAL_RUN_STATUSES;

export const runIdOf = (episode: Episode): string => `run-${episode.ids.tag}`;

function observe(outcome: CallOutcome): Observation {
  switch (outcome.status) {
    case 'CONFIRMED':
      return { kind: 'done', ref: outcome.externalRef };
    case 'FAILED':
      return { kind: 'refused', message: JSON.stringify(outcome.error) };
    case 'REJECTED':
      return { kind: 'refused', message: outcome.message };
    case 'PURE':
      return { kind: 'done', ref: null };
    default:
      return { kind: 'pending', message: outcome.status };
  }
}

function observeError(e: unknown): Observation {
  if (e instanceof ToolOutcomeUnknown) return { kind: 'pending', message: e.message };
  if (e instanceof DuplicateOperationError) return { kind: 'duplicate', ref: e.externalRef ?? null };
  if (e instanceof ServiceUnavailableError || e instanceof UnexpectedResponseError)
    return { kind: 'silence', message: e.message };
  if (e instanceof SagaApiError) return { kind: 'error', message: `${e.code}: ${e.message}` };
  throw e;
}

export function agentSagaPort(saga: SagaClient, episode: Episode): ToolPort {
  const runId = runIdOf(episode);
  let handle: RunHandle = saga.run(runId);
  const stepOf = new Map<number, number>();

  const readStep = async (write: number): Promise<Observation> => {
    const idx = stepOf.get(write);
    if (idx === undefined) return { kind: 'silence', message: 'the call was never written' };
    const deadline = Date.now() + READ_BACK_MS;
    while (Date.now() < deadline) {
      const run = await saga.getRun(runId).catch(() => undefined);
      const s = run?.steps.find((x) => x.stepIdx === idx);
      if (s && SETTLED_STEP.has(s.status)) {
        if (s.status === 'CONFIRMED') return { kind: 'done', ref: s.externalRef };
        if (s.status === 'MANUAL_INTERVENTION')
          return { kind: 'needs_person', message: 'MANUAL_INTERVENTION' };
        return { kind: 'refused', message: s.status };
      }
      await sleep(POLL_MS);
    }
    return { kind: 'pending', message: 'not settled yet' };
  };

  return {
    async start() {
      for (let i = 0; ; i++) {
        try {
          await saga.createRun({ runId, metadata: { simulate: episode.ids.tag } });
          return;
        } catch (e) {
          if (i >= 10 || !(e instanceof ServiceUnavailableError)) throw e;
          await sleep(500);
        }
      }
    },
    async call(write, tool, args) {
      try {
        const outcome = await handle.call(tool, args, { waitMs: WAIT_MS });
        if ('stepIdx' in outcome) stepOf.set(write, outcome.stepIdx);
        return observe(outcome);
      } catch (e) {
        if (e instanceof ToolOutcomeUnknown) stepOf.set(write, e.stepIdx);
        return observeError(e);
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
      try {
        await saga.unwind(runId, reason.slice(0, 500));
      } catch (e) {
        if (!(e instanceof ConflictError)) throw e; // already unwinding or terminal
      }
    },
    async settle(): Promise<HarnessEnding> {
      const deadline = Date.now() + SETTLE_MS;
      let status: string | null = null;
      while (Date.now() < deadline) {
        const run = await saga.getRun(runId).catch(() => undefined);
        status = run?.status ?? status;
        if (status !== null && TERMINAL.includes(status)) break;
        await sleep(POLL_MS);
      }
      return { runStatus: status };
    },
  };
}
