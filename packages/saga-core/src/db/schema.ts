import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';
import type { ApprovalKind, ApprovalStatus } from '../review/approvals/approval-status.js';
import type { CompensationStatus } from '../compensations/compensation-status.js';
import type { CorrectionStatus } from '../review/corrections/correction-status.js';
import type { ReviewStatus } from '../review/cases/case-status.js';
import type { RunStatus } from '../runs/run-status.js';
import type { StepEventKind } from '../steps/step-event-kind.js';
import type { StepStatus } from '../steps/step-status.js';
import type { TokenRole } from '../auth/token-role.js';
import type { TokenScope } from '../auth/token-scope.js';
import type { ToolClass } from '../tools/tool-class.js';
import type { SagaBudget } from '../sagas/saga-budget.js';

type Json<T = unknown> = ColumnType<T, string, string>;
type JsonNullable<T = unknown> = ColumnType<T | null, string | null | undefined, string | null>;

export interface RunsTable {
  run_id: string;
  tenant_id: string;
  status: RunStatus;
  status_reason: string | null;
  /**
   * A floor of the run's cursor (migration 0024), not the cursor: the cursor, the next step index for calls
   * that send no `stepIdx`, is the first index at or after it with no delivered step (`runs/run-cursor.ts`).
   */
  cursor_floor: Generated<number>;
  metadata: Json<Record<string, unknown>>;
  /** The run's policy, fixed at creation (migration 0005). */
  policy: ColumnType<RunPolicy, string | undefined, string>;
  /** The first commit step of the run's pending or approved pivot; null before any pivot. */
  pivot_idx: number | null;
  /** Irreversible steps released before any pivot (each was approved on its own). */
  irreversible_before_pivot: Generated<number>;
  /** The saga definition the run is bound to (migration 0013); both null for an unbound run. */
  definition_name: string | null;
  definition_version: number | null;
  /** What the run is for and who asked, as given at creation. */
  goal: string | null;
  actor: string | null;
  /** The validated plan, `[{ step, args }]`, and the sha256 of its canonical JSON; null without a plan. */
  plan: JsonNullable<readonly { step: string; args: Record<string, unknown> }[]>;
  plan_hash: string | null;
  /** The run's budget (the definition's defaults merged with its own); `{}` for none. */
  budget: ColumnType<RunBudget, string | undefined, string>;
  /** The budget's deadline as an absolute time; null without one. */
  deadline_at: Date | null;
  /** A rule only the intake transaction applies (definition, plan, budget, money policy): no grouped intake. */
  governed: Generated<boolean>;
  /** When the run's authority was last granted: its creation, then each approval. */
  authority_at: Generated<Date>;
  /** The id of the token that created the run (migration 0017); null for older runs. */
  created_by_token: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** What a run allows, chosen by whoever creates it. */
export interface RunPolicy {
  /** Refuse irreversible calls outside a pivot (`409 PIVOT_REQUIRED`) instead of holding each for approval. */
  readonly requirePivot?: boolean;
  /** Unwind the run by itself when a step fails definitively (FAILED) before the pivot. */
  readonly unwindOnFailure?: boolean;
  /**
   * Hold a forward call (or a compensation) that moves more than this, by currency in minor units
   * (`{ usd: 50000 }`, keys lower-cased at creation), for an approval. A currency not named is not held.
   */
  readonly approveMoneyAbove?: Readonly<Record<string, number>>;
  /** Hold a compensation that deletes (a ticket, a draft) for an approval. */
  readonly approveDeletions?: boolean;
  /** How long the run's authority lasts from its creation or its last approval; recovery after it pauses. */
  readonly authorityTtlMs?: number;
}

/** A run's budget as stored: how far it may go (see core's `sagas/saga-budget.ts`). */
export interface RunBudget {
  readonly maxSteps?: number;
  /** By currency, in minor units. */
  readonly maxAmount?: Readonly<Record<string, number>>;
  /** ISO time after which the run stops. */
  readonly deadline?: string;
  readonly maxAttempts?: number;
}

/** One row per non-pure step: the durable intent, then its outcome. */
export interface SagaLogTable {
  run_id: string;
  step_idx: number;
  tenant_id: string;
  tool: string;
  tool_class: ToolClass;
  tool_version: number;
  idempotency_key: string;
  args: Json<Record<string, unknown>>;
  /** sha256 of the canonical `{ tool, args }`, its 32 bytes (migration 0023; hex in `payloadHash`). */
  payload_hash: ColumnType<Buffer, Buffer, never>;
  status: StepStatus;
  external_ref: string | null;
  result: JsonNullable;
  error: JsonNullable<Record<string, unknown>>;
  /** The compensation command, written before the call: `{ tool, toolVersion, args, key }`. */
  compensation: JsonNullable<StoredCompensation>;
  compensation_status: CompensationStatus | null;
  correction: JsonNullable<Record<string, unknown>>;
  audience: string[];
  depends_on: number[] | null;
  /** The definition step the call was matched to (migration 0013); null on an unbound run. */
  step_id: string | null;
  attempts: Generated<number>;
  lease_until: Date | null;
  lease_owner: string | null;
  /** When the last attempt was sent; a lookup's "not found" is believed only after the tool's lag. */
  last_attempt_at: Date | null;
  /** Whether a response has carried this step's settled outcome to the caller (moves the cursor). */
  outcome_delivered: Generated<boolean>;
  /** The reconciler holding this step while it looks the effect up, until when (migration 0003). */
  reconcile_lease_until: Date | null;
  reconcile_lease_owner: string | null;
  /** Failed lookups since the step last moved forward; past the budget, MANUAL_INTERVENTION. */
  reconcile_attempts: Generated<number>;
  /** The reconciler looks again no earlier than this (backoff, or the tool's lookup lag); null: due. */
  next_reconcile_at: Date | null;
  /** The approval that covers this step (a pivot's commit step, or a held step); migration 0005. */
  approval_id: string | null;
  /**
   * The step's W3C trace id, 16 bytes (migration 0019; core's `tracing/stored-trace.ts`); null for older
   * steps. Written with the intent, never changed.
   */
  trace_id: ColumnType<Buffer | null, Buffer | null | undefined, never>;
  /** The intake's span id, 8 bytes: the parent of every later span of the step (migration 0019). */
  span_id: ColumnType<Buffer | null, Buffer | null | undefined, never>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  /**
   * The call's standard events as data of the row (migration 0022; `steps/standard-events.ts` says which
   * and how): the outcome of its first attempt, its first attempt and its intake, each written once by the
   * statement that makes it (an event is there when its id is not null). Read them through the view
   * `step_events`, not here.
   */
  outcome_event_id: string | null;
  outcome_event_at: Date | null;
  outcome_to: StepStatus | null;
  outcome_cause: string | null;
  outcome_detail: JsonNullable<Record<string, unknown>>;
  attempt_event_id: string | null;
  attempt_event_at: Date | null;
  attempt_cause: string | null;
  attempt_worker: string | null;
  /** Null when the job id was the step's key (a first dispatch's). */
  attempt_job_id: string | null;
  intake_event_id: string | null;
  intake_event_at: Date | null;
  intake_to: StepStatus | null;
  intake_decision: JsonNullable<Record<string, unknown>>;
}

export interface StoredCompensation {
  readonly tool: string;
  readonly toolVersion: number;
  readonly args: Record<string, unknown>;
  readonly key: string;
}

/**
 * The events written as rows (migration 0022 renamed `step_events` to this): every event but a call's standard
 * ones (`steps/standard-events.ts`). Writers insert here; readers read the view {@link StepEventsView}.
 */
export interface StepEventRowsTable {
  id: Generated<string>;
  run_id: string;
  /** Null for an event of the run itself (a run transition, a decision about the whole run). */
  step_idx: number | null;
  kind: StepEventKind;
  from_status: string | null;
  to_status: string | null;
  cause: string;
  detail: JsonNullable<Record<string, unknown>>;
  /** Who decided, for a person's decision; null for the harness's own events. */
  actor: string | null;
  /** The step's trace id (migration 0019; filled from the step by a trigger when not written); null for a run's events. */
  trace_id: ColumnType<Buffer | null, Buffer | null | undefined, never>;
  at: Generated<Date>;
}

/**
 * The journal every reader reads (migration 0022's view `step_events`): the rows of `step_event_rows` and the
 * standard events rebuilt from each `saga_log` row, with the same columns. Read-only: a view of a UNION
 * takes no writes, so its columns take none in the types either.
 */
export type StepEventsView = {
  readonly [K in keyof StepEventRowsTable]: ColumnType<Selectable<StepEventRowsTable>[K], never, never>;
};

export interface OutboxTable {
  id: Generated<string>;
  topic: string;
  run_id: string;
  step_idx: number;
  idempotency_key: string;
  /** The BullMQ job id: the key for a first dispatch, key plus dispatch number for a re-dispatch. */
  job_id: string;
  payload: Json<Record<string, unknown>>;
  created_at: Generated<Date>;
  /** The relays publish the row from this time on (later than `created_at` when the API publishes it). */
  relay_after: Generated<Date>;
  published_at: Date | null;
}

/** An API token (migration 0001; id, scope, expiry, last use and rotation 0017). */
export interface ApiTokensTable {
  /** sha256 hex of the secret; changes on rotation. */
  token_hash: string;
  /** The token's stable name (`tok_…`): what list, revoke, rotate and decisions refer to. */
  id: Generated<string>;
  tenant_id: string;
  role: TokenRole;
  /** Unique per tenant (migration 0017). */
  label: string | null;
  /** Which runs of the tenant the token may see: all of them, or those it created. */
  scope: ColumnType<TokenScope, TokenScope | undefined, TokenScope>;
  created_at: Generated<Date>;
  /** Null: never expires. */
  expires_at: Date | null;
  /** Updated at most once a minute per token, off the request's path. */
  last_used_at: Date | null;
  rotated_at: Date | null;
  revoked_at: Date | null;
}

/** One step's compensation (migration 0004): its intent log, keyed like the step. */
export interface CompensationsTable {
  run_id: string;
  step_idx: number;
  tenant_id: string;
  /** The compensation tool, key and stored (unresolved) arguments; null for a skipped step. */
  tool: string | null;
  idempotency_key: string | null;
  args: JsonNullable<Record<string, unknown>>;
  status: CompensationStatus;
  /** Why it was skipped, or why it needs a person. */
  reason: string | null;
  attempts: Generated<number>;
  lease_until: Date | null;
  lease_owner: string | null;
  last_attempt_at: Date | null;
  /** Not before: the backoff of a failed attempt, or the re-check of an unknown one. */
  next_attempt_at: Date | null;
  external_ref: string | null;
  result: JsonNullable;
  error: JsonNullable<Record<string, unknown>>;
  /** The `compensation` approval that held it (migration 0014); null for one nobody had to approve. */
  approval_id: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** A correction queued for a person (migration 0004; id, hash and decision columns 0005). */
export interface CorrectionsTable {
  id: Generated<string>;
  run_id: string;
  step_idx: number;
  tenant_id: string;
  /** The message to send: `{ tool, args }` as stored before the original call, or as a person edited it. */
  command: Json<Record<string, unknown>>;
  audience: string[];
  status: CorrectionStatus;
  /**
   * The key of the current send, fixed (with the lease) when a send starts: `correctionSendKey` of the
   * message version. Null while the current version was never sent.
   */
  idempotency_key: string | null;
  external_ref: string | null;
  /** The message's version (migration 0006): 1 as queued, +1 per edit; each version has its own key. */
  version: Generated<number>;
  /** Who holds the send's lease while `sending` (migration 0006). */
  lease_owner: string | null;
  /** Until when, by the database's clock: past it with the row still `sending`, the sender is gone. */
  lease_until: Date | null;
  /** When the current send started, by the database's clock: the lookup lag counts from here. */
  send_started_at: Date | null;
  decided_by: string | null;
  /** The id of the token that decided (migration 0017), beside its label in `decided_by`. */
  decided_by_token: ColumnType<string | null, string | null | undefined, string | null>;
  decided_at: Date | null;
  comment: string | null;
  created_at: Generated<Date>;
}

/** A manual-intervention case (migration 0004). */
export interface CasesTable {
  id: Generated<string>;
  run_id: string;
  step_idx: number | null;
  tenant_id: string;
  reason: string;
  evidence: Json<Record<string, unknown>>;
  status: ReviewStatus;
  resolved_by: string | null;
  /** The id of the token that resolved it (migration 0017), beside its label in `resolved_by`. */
  resolved_by_token: ColumnType<string | null, string | null | undefined, string | null>;
  resolved_at: Date | null;
  /** What the person did: `{ action, externalRef?, comment? }`. */
  resolution: JsonNullable<Record<string, unknown>>;
  created_at: Generated<Date>;
}

/** One human decision (migration 0005): bound by `hash` to the exact steps it releases. */
export interface ApprovalsTable {
  id: string;
  tenant_id: string;
  run_id: string;
  kind: ApprovalKind;
  status: ApprovalStatus;
  /** sha256 of the canonical `{ runId, steps: [{ stepIdx, tool, toolVersion, key, args }] }` it covers. */
  hash: string;
  steps: number[];
  summary: string | null;
  evidence: Json<Record<string, unknown>>;
  expires_at: Date;
  decided_by: string | null;
  /** The id of the token that decided (migration 0017), beside its label in `decided_by`. */
  decided_by_token: ColumnType<string | null, string | null | undefined, string | null>;
  decided_at: Date | null;
  comment: string | null;
  created_at: Generated<Date>;
}

/**
 * A tenant's policy floor (migration 0018): set by an operator, applied to every run the tenant creates
 * after it (core's `applyPolicyFloor`: a run may tighten it, never loosen it). No row: no floor.
 */
export interface TenantPoliciesTable {
  tenant_id: string;
  /** The floor of a run's policy; `{}` when it sets none. Currency codes lower-cased. */
  policy: ColumnType<RunPolicy, string | undefined, string>;
  /** The ceilings of a run's budget (`deadlineMs` relative to the run's creation); `{}` when none. */
  budget: ColumnType<SagaBudget, string | undefined, string>;
  /** 1 when first set, +1 on every change: what a compare-and-set change names (`ifVersion`). */
  version: number;
  updated_at: Generated<Date>;
  /** The label of the operator token that last set it, and its id. */
  updated_by: string | null;
  updated_by_token: string | null;
}

export interface Database {
  runs: RunsTable;
  saga_log: SagaLogTable;
  step_event_rows: StepEventRowsTable;
  step_events: StepEventsView;
  outbox: OutboxTable;
  api_tokens: ApiTokensTable;
  compensations: CompensationsTable;
  corrections: CorrectionsTable;
  cases: CasesTable;
  approvals: ApprovalsTable;
  tenant_policies: TenantPoliciesTable;
}

export type RunRow = Selectable<RunsTable>;
/**
 * A step as its readers get it: the `saga_log` row without the standard events it stores (migration 0022,
 * read through the view `step_events`); `steps/step-row-columns.ts` lists its columns for the SQL that returns it.
 */
export type StepRow = Omit<Selectable<SagaLogTable>, StoredEventColumn>;

/**
 * The columns of `saga_log` that hold a standard event (migration 0022; `steps/standard-events.ts` lists
 * them by event as `STANDARD_EVENT_COLUMNS`, checked against this union both ways).
 */
export type StoredEventColumn = Extract<
  keyof SagaLogTable,
  | 'outcome_event_id'
  | 'outcome_event_at'
  | 'outcome_to'
  | 'outcome_cause'
  | 'outcome_detail'
  | 'attempt_event_id'
  | 'attempt_event_at'
  | 'attempt_cause'
  | 'attempt_worker'
  | 'attempt_job_id'
  | 'intake_event_id'
  | 'intake_event_at'
  | 'intake_to'
  | 'intake_decision'
>;
export type NewStepRow = Insertable<SagaLogTable>;
export type StepEventRow = Selectable<StepEventsView>;
export type OutboxRow = Selectable<OutboxTable>;
export type CompensationRow = Selectable<CompensationsTable>;
export type CorrectionRow = Selectable<CorrectionsTable>;
export type CaseRow = Selectable<CasesTable>;
export type ApprovalRow = Selectable<ApprovalsTable>;
export type TenantPolicyRow = Selectable<TenantPoliciesTable>;
