import { CallStatus, type SettledOutcome } from './call-outcome.js';
import type { SagaClient } from './create-saga-client.js';
import { NotFoundError } from './errors.js';
import type { ApprovalView } from './review-views.js';
import { ApprovalKind } from './statuses.js';

/**
 * Finding again a step the harness held for a person, from an agent framework's tool call (the AI SDK's,
 * the OpenAI Agents SDK's), and reading its outcome once it settled: the framework-free part of every
 * integration's approval bridge, in one place. A framework's call id is not known to the harness, so a
 * call this process did not see held is found by its tool and arguments.
 */

/** A held step a process saw answered AWAITING_APPROVAL: which run, step and key. */
export interface KnownHeldStep {
  readonly runId: string;
  readonly stepIdx: number;
  readonly idempotencyKey: string;
}

/** Where a held call was found: its run, its step and that step's newest approval. */
export interface FoundHeldStep {
  readonly runId: string;
  readonly stepIdx: number;
  readonly tool: string;
  readonly idempotencyKey: string;
  readonly approval: ApprovalView;
}

/**
 * The held step behind a tool call: the step `known` names when this process saw it held, else, in each of
 * `runIds`, the newest step approval of the same tool whose stored arguments contain the call's (see
 * {@link argsContain}). Undefined when none is found.
 */
export async function findHeldStep(
  client: Pick<SagaClient, 'getRun'>,
  call: {
    readonly known?: KnownHeldStep | undefined;
    readonly runIds: readonly string[];
    readonly tool: string;
    readonly input: unknown;
  },
): Promise<FoundHeldStep | undefined> {
  const { known } = call;
  for (const runId of known ? [known.runId] : call.runIds) {
    // The run's own approvals, from its view: an agent token reads its runs, never the review queues.
    const { approvals } = await client.getRun(runId);
    const newestFirst = [...approvals].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    for (const approval of newestFirst) {
      const step = approval.steps.find((s) =>
        known
          ? s.stepIdx === known.stepIdx && s.idempotencyKey === known.idempotencyKey
          : approval.kind === ApprovalKind.STEP && s.tool === call.tool && argsContain(s.args, call.input),
      );
      if (step)
        return {
          runId,
          stepIdx: step.stepIdx,
          tool: step.tool,
          idempotencyKey: step.idempotencyKey,
          approval,
        };
    }
  }
  return undefined;
}

/** What the model reads when the log says a person refused the held call. */
export const REJECTED_HELD_CALL_MESSAGE =
  'A person refused this call in agent-saga before it was sent; nothing happened. Do not reach the same ' +
  'goal another way.';

/**
 * The outcome of step `stepIdx` of `runId` as the log has it, once it settled (CONFIRMED, FAILED, REJECTED):
 * what a resumed agent reads for a call that was held; undefined while the step is open or missing. Reads
 * that one step (`getStep`), not the whole run.
 */
export async function settledOutcomeOfStep(
  client: Pick<SagaClient, 'getStep'>,
  runId: string,
  stepIdx: number,
): Promise<SettledOutcome | undefined> {
  const step = await client.getStep(runId, stepIdx).catch((err: unknown) => {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  });
  if (!step) return undefined;
  const base = { stepIdx: step.stepIdx, idempotencyKey: step.idempotencyKey };
  switch (step.status) {
    case CallStatus.CONFIRMED:
      return {
        ...base,
        status: CallStatus.CONFIRMED,
        externalRef: step.externalRef,
        result: step.result,
        replayed: true,
      };
    case CallStatus.FAILED:
      return { ...base, status: CallStatus.FAILED, error: step.error, replayed: true };
    case CallStatus.REJECTED:
      return { ...base, status: CallStatus.REJECTED, message: REJECTED_HELD_CALL_MESSAGE };
    default:
      return undefined;
  }
}

/**
 * What the dispatcher shows in place of a value the reader may not see (core's `SECRET_MARK` and
 * `PERSONAL_MARK`): an agent token reads its run's held steps with personal fields redacted.
 */
const REDACTION_MARKS: ReadonlySet<unknown> = new Set(['[REDACTED]', '[PERSONAL]']);

/**
 * True when every field the model gave equals the stored argument (deeply). The stored arguments may have
 * more: the harness fills in its schema's defaults (`vars: {}`) before it writes them. A stored field the
 * reader sees redacted matches whatever the model gave there: the other fields, the tool and the run still
 * have to match, and the step found is only ever read or decided through its own key.
 */
export function argsContain(stored: unknown, given: unknown): boolean {
  if (REDACTION_MARKS.has(stored)) return true;
  if (typeof given !== 'object' || given === null) return Object.is(stored, given);
  if (typeof stored !== 'object' || stored === null) return false;
  if (Array.isArray(given))
    return (
      Array.isArray(stored) &&
      stored.length === given.length &&
      given.every((g, i) => argsContain(stored[i], g))
    );
  const s = stored as Record<string, unknown>;
  return Object.entries(given).every(([k, v]) => Object.hasOwn(s, k) && argsContain(s[k], v));
}
