import { sql, type RawBuilder } from 'kysely';
import type { SagaDb, SagaTrx } from '../../db/connect.js';
import { DuplicateOperationError, StepUnresolvedError } from '../../errors/errors.js';
import { preparedAs } from '../../db/prepared-statements.js';
import { readPath } from '../../tools/parse-args.js';
import type { AnyTool } from '../../tools/define-tool.js';
import { valuesOf } from '../../util/values-of.js';
import { StepStatus, UNRESOLVED_STEP_STATUSES } from '../step-status.js';

/**
 * The rule against replanned duplicates, in one place for both intake forms (the intake transaction and the
 * grouped statement, `recordNewIntents`):
 *
 * A NEW step (no row yet at its index) of a tool that is not `repeatable` is refused (409
 * DUPLICATE_OPERATION, nothing written) when an earlier step of the same run is **the same operation** and
 * **may have taken effect**:
 * - the same operation: the same tool, and equal values at each of the tool's `identity` paths (an absent
 *   value counts as null); a tool that declares no `identity` compares its whole arguments. Values compare as
 *   jsonb (`=`: key order and number spelling do not matter), path by path. Containment (`@>`) is not used:
 *   it would take `{ items: [1, 2] }` for a duplicate of `{ items: [1, 2, 3] }`;
 * - may have taken effect: any status but {@link NEVER_TOOK_EFFECT_STATUSES} (FAILED: the system said no;
 *   NOT_EXECUTED: proven absent; REJECTED: a person refused it before it was sent, as a superseded pivot's
 *   commit steps are). AWAITING_APPROVAL counts: it will be sent once approved.
 *
 * "Earlier" is any row of the run: a row at a higher index (a client that skipped ahead) was written
 * before this call too. The rows are read by the primary key's range on `run_id` (the run's own rows, 20
 * for a 20-step run), so the check costs one index range scan and no new column or index. Pure tools have
 * no row and are never compared.
 *
 * How it is refused depends on whether the earlier step's outcome is known ({@link refusalOfRepeat}): a
 * step that took effect or will (CONFIRMED, AWAITING_APPROVAL, MANUAL_INTERVENTION) answers 409
 * DUPLICATE_OPERATION with its outcome: use it, do not do it again. A step still on its way or not known
 * (INTENDED, UNKNOWN) answers 409 STEP_UNRESOLVED naming it: it may yet settle FAILED, and then this very
 * call is the one that must be made, so "duplicate" would be a false answer. An agent told "duplicate" while
 * the earlier charge was UNKNOWN took it for done, the charge then failed, and the run completed without
 * one (`pnpm simulate`, seed 20271, a resumed agent). Told STEP_UNRESOLVED, it waits for that step (or
 * retries it at its index, which looks it up by key) and calls again: refused as the duplicate once it is
 * CONFIRMED, written once it FAILED. Either way nothing is written.
 *
 * A retry at the same index is not a new step: it keeps its own rule (identity changed → 409
 * IDEMPOTENCY_MISMATCH, else the step's outcome).
 *
 * **Concurrent duplicates.** The intake transaction reads the run's rows in a statement after `lockRun`, so
 * it sees every intake of the run committed before it got the lock: two duplicates sent at once through
 * it, one is written and the other refused. The grouped statement is one statement, whose snapshot predates
 * its wait for the run locks; it reads the runs' rows through `saga_repeated_operations` (migration 0026;
 * 0016's `saga_earlier_operation`, one call per item, before it), a VOLATILE function called once for the
 * group after every lock is held, which takes a fresh snapshot then: it too sees every intake committed
 * before the locks were granted, whichever statement or process made it. Two items of one group are compared
 * with each other (both then take the transaction). That function spells this rule out as it stood at its
 * migration; `find-duplicate-operation.test.ts` checks the two agree, so a change here needs a migration.
 */

/** Step statuses after which the same operation may be called again: the earlier one never took effect. */
export const NEVER_TOOK_EFFECT_STATUSES = [
  StepStatus.FAILED,
  StepStatus.NOT_EXECUTED,
  StepStatus.REJECTED,
] as const satisfies readonly StepStatus[];

/** What two calls must share to be one operation: the tool and its identity values. */
export interface OperationIdentity {
  readonly tool: string;
  /** The call's parsed arguments (compared whole when `identity` is null). */
  readonly args: Readonly<Record<string, unknown>>;
  /**
   * Each `identity` path (dotted) with the call's value there, null when absent; null when the tool declares
   * no identity, so its whole arguments compare.
   */
  readonly identity: Readonly<Record<string, unknown>> | null;
}

/** The operation a call of `tool` with parsed `args` performs; null for a `repeatable` tool (never refused). */
export function operationIdentity(
  tool: AnyTool,
  args: Readonly<Record<string, unknown>>,
): OperationIdentity | null {
  if (tool.repeatable) return null;
  if (tool.identity.length === 0) return { tool: tool.name, args, identity: null };
  const identity: Record<string, unknown> = {};
  for (const path of tool.identity) identity[path] = readPath(args, path) ?? null;
  return { tool: tool.name, args, identity };
}

/** An operation as SQL expressions: bound parameters (the intake transaction) or columns (a grouped statement). */
export interface OperationSql {
  readonly tool: RawBuilder<string>;
  /** jsonb */
  readonly args: RawBuilder<unknown>;
  /** jsonb object of path → value, or NULL: compare the whole arguments. */
  readonly identity: RawBuilder<unknown>;
}

/**
 * `op` as bound parameters; null (a repeatable tool) as NULLs, which match no row, so one statement text
 * (one prepared statement) serves both.
 */
export function operationParams(op: OperationIdentity | null): OperationSql {
  return {
    tool: sql<string>`${op?.tool ?? null}::text`,
    args: sql`${op ? JSON.stringify(op.args) : null}::jsonb`,
    identity: sql`${op?.identity ? JSON.stringify(op.identity) : null}::jsonb`,
  };
}

/**
 * Whether the row `stored` (an alias with `tool` and `args` columns: a saga_log row, or another item of a
 * grouped statement) is the operation `op`. The status is not looked at: see {@link isDuplicateOf}.
 */
export function sameOperation(stored: string, op: OperationSql): RawBuilder<boolean> {
  const tool = sql.ref(`${stored}.tool`);
  const args = sql.ref(`${stored}.args`);
  return sql<boolean>`(${tool} = ${op.tool} AND CASE WHEN ${op.identity} IS NULL THEN ${args} = ${op.args}
    ELSE NOT EXISTS (SELECT 1 FROM jsonb_each(${op.identity}) AS idf(path, value)
                      WHERE coalesce(${args} #> string_to_array(idf.path, '.'), 'null'::jsonb) <> idf.value) END)`;
}

/** Whether the saga_log row `stored` (an alias) is an earlier step of `op` that may have taken effect. */
export function isDuplicateOf(stored: string, op: OperationSql): RawBuilder<boolean> {
  return sql<boolean>`(${mayHaveTakenEffect(stored)} AND ${sameOperation(stored, op)})`;
}

function mayHaveTakenEffect(stored: string): RawBuilder<boolean> {
  const never = sql.join(NEVER_TOOK_EFFECT_STATUSES.map((s) => sql.lit(s)));
  return sql<boolean>`${sql.ref(`${stored}.status`)} NOT IN (${never})`;
}

const STEP_STATUSES = valuesOf(StepStatus);

/** The earlier step a refused call repeats, as the refusal reports it. */
export interface EarlierOperation {
  readonly stepIdx: number;
  readonly status: StepStatus;
  readonly idempotencyKey: string;
  readonly externalRef: string | null;
  readonly result: unknown;
  /**
   * Whether the earlier step's stored arguments equal this call's parsed ones, whole (jsonb `=`): the call
   * is the earlier one sent again, not a reworded or replanned one. Computed here because only the
   * dispatcher holds both parsed forms: a client's raw arguments differ from stored ones by the schema's
   * defaults, and a run view may redact them (the MCP gateway's replay of a re-issued call reads this).
   */
  readonly sameArgs: boolean;
}

/**
 * The refusal of a new step of `tool` that repeats `earlier` (see the rule above): STEP_UNRESOLVED while the
 * earlier step's outcome is not known (INTENDED, UNKNOWN), DUPLICATE_OPERATION otherwise.
 */
export function refusalOfRepeat(
  tool: string,
  earlier: EarlierOperation,
): DuplicateOperationError | StepUnresolvedError {
  if ((UNRESOLVED_STEP_STATUSES as readonly StepStatus[]).includes(earlier.status))
    return new StepUnresolvedError(
      earlier.stepIdx,
      `${tool}: this operation was already called as step ${earlier.stepIdx} of this run, whose outcome is ` +
        `not known yet (${earlier.status}); wait for that step to settle (call it again at stepIdx ` +
        `${earlier.stepIdx} to learn it), then call again: refused as a duplicate if it took effect, ` +
        'accepted if it failed',
    );
  return new DuplicateOperationError(tool, earlier);
}

/**
 * A scalar subquery: the lowest step of run `runId` that is a duplicate of `op` (see {@link isDuplicateOf}),
 * as a jsonb object ({@link EarlierOperation}'s fields), or NULL. For a caller that reads it in a statement
 * of its own (the intake transaction's read of its target, after `lockRun`).
 */
export function earlierOperationSql(runId: RawBuilder<string>, op: OperationSql): RawBuilder<unknown> {
  return sql`(SELECT jsonb_build_object('stepIdx', u.step_idx, 'status', u.status,
                                        'idempotencyKey', u.idempotency_key,
                                        'externalRef', u.external_ref, 'result', u.result,
                                        'sameArgs', u.args = ${op.args})
                FROM saga_log u
               WHERE u.run_id = ${runId} AND ${isDuplicateOf('u', op)}
               ORDER BY u.step_idx LIMIT 1)`;
}

/** Reads what {@link earlierOperationSql} returned (undefined for NULL). */
export function parseEarlierOperation(value: unknown): EarlierOperation | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value as Record<string, unknown>;
  const status = STEP_STATUSES.find((s) => s === v.status);
  if (status === undefined) throw new Error(`earlier operation with an unknown status: ${String(v.status)}`);
  return {
    stepIdx: Number(v.stepIdx),
    status,
    idempotencyKey: String(v.idempotencyKey),
    externalRef: typeof v.externalRef === 'string' ? v.externalRef : null,
    result: v.result ?? null,
    sameArgs: v.sameArgs === true,
  };
}

/**
 * The earlier step of run `runId` that a new step of `op` would duplicate, or undefined. Inside the intake,
 * call it after `lockRun` (its statement then sees every intake of the run committed before the lock).
 */
export async function findDuplicateOperation(
  db: SagaDb | SagaTrx,
  runId: string,
  op: OperationIdentity,
): Promise<EarlierOperation | undefined> {
  const r = await sql<{ earlier: unknown }>`${preparedAs('saga_find_duplicate_operation')}
    SELECT ${earlierOperationSql(sql<string>`${runId}::text`, operationParams(op))} AS earlier`.execute(db);
  return parseEarlierOperation(r.rows[0]?.earlier);
}
