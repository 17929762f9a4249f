/**
 * What the scripted agent sees of a harness: one interface both harnesses implement, so the agent's
 * decisions are the same code for both, given the same observations.
 */
import type { Episode } from './draw-episodes.js';
import type { WriteTool } from './support-workflows.js';

/** What one tool call looked like to the agent. */
export type Observation =
  | { readonly kind: 'done'; readonly ref: string | null }
  /** The vendor (or a person) said no: nothing happened. */
  | { readonly kind: 'refused'; readonly message: string }
  /** An error answer (5xx, 429, an unavailable harness): the agent does not know what happened. */
  | { readonly kind: 'error'; readonly message: string }
  /** A timeout, a reset connection, an empty answer. */
  | { readonly kind: 'silence'; readonly message: string }
  /** agent-saga: the harness has the call and will settle it (INTENDED, UNKNOWN); do not act again. */
  | { readonly kind: 'pending'; readonly message: string }
  /** agent-saga: this action was done already, at an earlier step (a replanned duplicate refused). */
  | { readonly kind: 'duplicate'; readonly ref: string | null }
  /** agent-saga: the outcome needs a person (MANUAL_INTERVENTION). */
  | { readonly kind: 'needs_person'; readonly message: string };

/** One line of the agent's transcript: a write it believes done, and the id it was told. */
export interface TranscriptEntry {
  readonly write: number;
  readonly tool: WriteTool;
  readonly args: Readonly<Record<string, unknown>>;
  readonly ref: string | null;
}

/** How the agent reports the episode: its own words, never what grading trusts. */
export const AgentReport = { SUCCESS: 'success', ROLLED_BACK: 'rolled_back', FAILED: 'failed' } as const;
export type AgentReport = (typeof AgentReport)[keyof typeof AgentReport];

/** What a harness says of an episode once it settled (agent-saga: the run's status in the log). */
export interface HarnessEnding {
  /** agent-saga: the run's status (COMPLETED, COMPENSATED, …, or RUNNING when it never settled). */
  readonly runStatus: string | null;
}

/** One write of a pivot's proposal, with its arguments as the agent words them. */
export interface PivotWrite {
  readonly write: number;
  readonly tool: WriteTool;
  readonly args: Readonly<Record<string, unknown>>;
}

export interface ToolPort {
  /** Before the first call (agent-saga: creates the run). */
  start(): Promise<void>;
  call(write: number, tool: WriteTool, args: Readonly<Record<string, unknown>>): Promise<Observation>;
  /** A patient agent's read-back after a `pending` answer (agent-saga: the log; naive: nothing to read). */
  readBack(write: number): Promise<Observation>;
  /** The agent process died: forget everything held in memory (agent-saga: the run handle). */
  crash(): void;
  /**
   * Proposes `commit` as one pivot and waits until a person decided and the commit steps settled: `done`
   * when they ran, `refused` when the person rejected it (the run unwinds by itself), `needs_person` when a
   * commit step could not finish. Only agent-saga has it; without it the agent just does the writes.
   */
  pivot?(commit: readonly PivotWrite[]): Promise<Observation>;
  /** Every write done: close the task (agent-saga: `complete`). */
  finish(): Promise<void>;
  /** Undo the task (agent-saga: `unwind`, from the log; naive: walk the transcript). */
  undo(reason: string, transcript: readonly TranscriptEntry[]): Promise<void>;
  /** Waits until the harness has settled the episode (bounded), and says how. */
  settle(): Promise<HarnessEnding>;
}

export type PortFactory = (episode: Episode) => ToolPort;
