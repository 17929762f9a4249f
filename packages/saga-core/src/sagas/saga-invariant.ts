import type { Logger } from '../process/logger.js';
import type { StepStatus } from '../steps/step-status.js';

/** A step of a run as a definition's invariant reads it. */
export interface InvariantStep {
  readonly stepIdx: number;
  /** The definition step the call was matched to; null for a call the definition did not plan. */
  readonly stepId: string | null;
  readonly tool: string;
  readonly status: StepStatus;
  readonly args: Readonly<Record<string, unknown>>;
  readonly externalRef: string | null;
  readonly result: unknown;
}

/** The two ends an invariant is checked before. */
export type InvariantEnding = 'COMPLETED' | 'COMPENSATED';

/** The run an invariant is checked on, as the saga log has it at the end. */
export interface InvariantRun {
  readonly runId: string;
  readonly tenantId: string;
  readonly definition: { readonly name: string; readonly version: number };
  /** Which end is being checked: the run finishing forward, or an unwind about to be called COMPENSATED. */
  readonly ending: InvariantEnding;
  /** Every step, in step order. */
  readonly steps: readonly InvariantStep[];
}

/** What a lookup is given beside its argument: the check's abort signal (its time bound) and a logger. */
export interface InvariantLookupContext {
  readonly signal: AbortSignal;
  readonly logger: Logger;
}

/**
 * One read of a real system by one id, as the tool module exports it (a charge by its PaymentIntent id,
 * the refunds of a PaymentIntent, the shipments of an order). Answers the vendor's object as the module
 * parses it; throws when the system cannot answer (a 5xx, a timeout, the check's signal): the check then
 * decides nothing (see `checkRunInvariant`).
 */
export type ToolModuleLookup = (id: string, ctx: InvariantLookupContext) => Promise<unknown>;

/**
 * The reads a tool module exports as `lookups` (`loadToolModule`), by name, built from the same vendor
 * clients as its tools; the roles that end runs (the API, the reconciler's follow-ups, the compensator)
 * pass them to `checkRunInvariant`.
 */
export type ToolModuleLookups = Readonly<Record<string, ToolModuleLookup>>;

/**
 * The module's lookups as an invariant calls them: by name, with the id only (the check supplies its
 * signal and logger). A name the module does not export is a lookup that rejects, never one that answers
 * "nothing".
 */
export type InvariantLookups = Readonly<Record<string, (id: string) => Promise<unknown>>>;

/** What an invariant found: it holds, or the clause that failed, in words for `statusReason`. */
export type InvariantVerdict = { readonly holds: true } | { readonly holds: false; readonly clause: string };

/**
 * The business state that must hold when a run ends (for refund_and_reship: a confirmed reship with
 * exactly one charge not refunded, or no live shipment and no net charge), checked against the real
 * systems before a bound run is marked COMPLETED (`completeRun`, the pivot's end in `advanceCommit`) or
 * COMPENSATED (the compensator), outside any transaction (`checkRunInvariant`). A failure ends the run
 * otherwise, naming the clause: MANUAL_INTERVENTION going forward, PARTIALLY_COMPENSATED after an unwind,
 * each with a case. It must only read: it may run more than once for one end (a check whose answer went
 * stale is made again), and a throw counts as "cannot answer", never as a pass.
 */
export type SagaInvariant = (run: InvariantRun, lookups: InvariantLookups) => Promise<InvariantVerdict>;
