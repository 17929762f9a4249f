import type { RawBuilder, UpdateObject } from 'kysely';
import type {
  AnyTool,
  CompensationRow,
  Database,
  Logger,
  ProposedStep,
  RecoveryPolicy,
  StepEventInput,
  StepRow,
} from '@agent-saga/core';
import { CompensationOutcome } from '../metrics/compensator-metrics.js';

/**
 * One pass over one due compensation (`runCompensation`): the row as this pass read it and what it is
 * judged with. Every move the pass makes from what it read is a compare-and-set on this row's status AND
 * attempt count, so a pass that read a row before another attempt came and went writes nothing.
 */
export interface CompensationPass {
  readonly comp: CompensationRow;
  /** The run's steps, as the same pass read them: the forward step, and the refs a command names. */
  readonly steps: readonly StepRow[];
  /** The run's unwind reason, for the tool's `ctx.unwindReason`. */
  readonly unwindReason: string | null;
  /** The run policy's recovery rules: which compensations wait for a person first. */
  readonly policy: RecoveryPolicy;
  readonly log: Logger;
}

/**
 * The evidence a pass gathers before it decides (its lookups by the compensation key), written before the
 * pass's first write: alone, before a single-row move or a re-check (`endPass`), or inside the attempt's
 * intent (`attemptCompensation`), so that the lookup that allowed a send commits with it.
 */
export type LookupEvents = readonly StepEventInput[];

/** What a pass that goes on carries from stage to stage: the tool, the key, the evidence so far. */
export interface GoingOn {
  readonly tool: AnyTool;
  readonly key: string;
  readonly lookups: LookupEvents;
}

/** The compensation is done already (found by its key, or the target is in the compensated state). */
export interface DoneAlready {
  readonly kind: 'done-already';
  readonly cause: string;
  readonly detail: Record<string, unknown>;
  readonly patch: Omit<UpdateObject<Database, 'compensations'>, 'status' | 'updated_at'>;
  readonly outcome: typeof CompensationOutcome.FOUND_BY_KEY | typeof CompensationOutcome.ALREADY_COMPENSATED;
  /** The lookup found more than one effect under the key (counted; the first is kept). */
  readonly duplicates: boolean;
}

/** Nothing can be decided yet: looked at again at `at` (a database timestamp, or `dbNowPlus(ms)`). */
export interface RecheckLater {
  readonly kind: 'recheck-later';
  readonly at: Date | RawBuilder<Date>;
  readonly why: string;
}

/**
 * The harness gives up: the compensation fails for good and a person must look (the run ends
 * MANUAL_INTERVENTION, with a case). `error` is stored on the row when given.
 */
export interface GiveUp {
  readonly kind: 'give-up';
  readonly reason: string;
  readonly detail: Record<string, unknown>;
  readonly outcome: CompensationOutcome;
  readonly error: Record<string, unknown> | null;
}

/**
 * The run policy wants a person before this compensation is sent (money above `approveMoneyAbove`, a
 * deletion under `approveDeletions`): held with a `compensation` approval bound to `command`.
 */
export interface HoldForApproval {
  readonly kind: 'hold-for-approval';
  /** The compensation exactly as it would be sent (resolved arguments), the approval's hash is of it. */
  readonly command: ProposedStep;
  readonly summary: string;
  /** The approval's evidence; its `deadline` is added when the hold is written (the database's clock). */
  readonly evidence: Record<string, unknown>;
}

/**
 * How a pass ends without sending anything: one of four, each written once, by `endPass`:
 *
 * - `done-already` → compensated with the evidence, nothing sent;
 * - `recheck-later` → no move; the row is due again later (a lookup too early after an unknown attempt, a
 *   lookup or a precondition that cannot be read yet);
 * - `give-up` → failed for good: MANUAL_INTERVENTION and a case;
 * - `hold-for-approval` → awaiting_approval with its approval: the rest of the unwind goes on.
 */
export type PassEnd = DoneAlready | RecheckLater | GiveUp | HoldForApproval;

/** A stage's way of saying "the pass ends here": every later stage hands it on untouched. */
export interface Ended {
  readonly kind: 'ended';
  readonly end: PassEnd;
  readonly lookups: LookupEvents;
}

export function ended(end: PassEnd, lookups: LookupEvents): Ended {
  return { kind: 'ended', end, lookups };
}

export function giveUp(
  reason: string,
  detail: Record<string, unknown> = {},
  outcome: CompensationOutcome = CompensationOutcome.GAVE_UP,
  error: Record<string, unknown> | null = null,
): GiveUp {
  return { kind: 'give-up', reason, detail, outcome, error };
}

export function recheckLater(at: Date | RawBuilder<Date>, why: string): RecheckLater {
  return { kind: 'recheck-later', at, why };
}

/** What a pass logs when its compare-and-set found the compensation moved by someone else. */
export const MOVED_MEANWHILE = 'compensation moved meanwhile; nothing written';

/** The end of an exhaustive `switch`: a variant added to a union fails to compile here. */
export function unhandled(never: never, what: string): never {
  throw new Error(`unhandled ${what} ${JSON.stringify(never)}`);
}
