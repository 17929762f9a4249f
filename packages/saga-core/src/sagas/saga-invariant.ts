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

/** The run an invariant is checked on, as the saga log has it at the end. */
export interface InvariantRun {
  readonly runId: string;
  readonly tenantId: string;
  readonly steps: readonly InvariantStep[];
}

/**
 * Reads of the real systems an invariant may make, by name (a charge by id, the shipments of an order),
 * supplied by the role that checks it. Their set is for the slice that checks invariants to fix.
 */
export type InvariantLookups = Readonly<
  Record<string, (args: Readonly<Record<string, unknown>>) => Promise<unknown>>
>;

/** What an invariant found: it holds, or the clause that failed, in words for `statusReason`. */
export type InvariantVerdict = { readonly holds: true } | { readonly holds: false; readonly clause: string };

/**
 * The business state that must hold when a run ends (for refund_and_reship: a confirmed reship with
 * exactly one charge not refunded, or no live shipment and no net charge), checked against the real
 * systems. Stored with the definition; **not checked yet**: a later slice calls it before a run is marked
 * COMPLETED or COMPENSATED, and a failure ends the run otherwise, naming the clause.
 */
export type SagaInvariant = (run: InvariantRun, lookups: InvariantLookups) => Promise<InvariantVerdict>;
