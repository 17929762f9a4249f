import { Kysely, PostgresDialect, sql, type PostgresPoolClient, type Transaction } from 'kysely';
import type pg from 'pg';
import { pino } from 'pino';
import { z } from 'zod';
import { SCHEMA_NAME, type SagaTrx } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import { BadRequestError, type FieldIssue } from '../errors/errors.js';
import type { Logger } from '../process/logger.js';
import type { SagaRegistry } from '../sagas/saga-registry.js';
import { callDecisionSchema, type CallDecision } from '../steps/intent/record-intent.js';
import { DEFAULT_MAX_REDISPATCHES } from '../steps/redispatch/redispatch-budget.js';
import type { StepStatus } from '../steps/step-status.js';
import { parseCallArgs } from '../tools/parse-args.js';
import { ToolClass } from '../tools/tool-class.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { callIntake } from './call-intake.js';

/**
 * A transaction the caller owns: a kysely `Transaction` of the caller's own Kysely (any database type; its
 * plugins are left out for core's statements, see `withoutPlugins`), or a `pg` client on which the caller
 * ran `BEGIN`.
 */
export type CallerTransaction<DB = unknown> = Transaction<DB> | pg.ClientBase;

/** The call, as `POST /v1/runs/{runId}/calls` takes it (no `waitMs`: nothing is awaited in a transaction). */
export interface CallerIntentRequest {
  readonly tenantId: string;
  readonly runId: string;
  readonly tool: string;
  /** Untrusted: parsed by the tool's schema (INVALID_ARGS naming the field). */
  readonly args: unknown;
  readonly stepIdx?: number | undefined;
  readonly dependsOn?: readonly number[] | undefined;
  readonly decision?: CallDecision | undefined;
}

export interface CallerIntakeOptions {
  readonly registry: ToolRegistry;
  /** The tool module's saga definitions: the calls of a bound run are matched against its own. */
  readonly definitions?: SagaRegistry | undefined;
  /** The Postgres schema of the saga log (the one `agent-saga migrate` ran in, DATABASE_SCHEMA). */
  readonly schema: string;
  /** Default: silent. Arguments are logged redacted, as by the API. */
  readonly log?: Logger | undefined;
  /** How long a held step waits for its approval; default one hour, the API's APPROVAL_TTL_MS default. */
  readonly approvalTtlMs?: number | undefined;
  /** SAGA_MAX_REDISPATCHES for a retry of a step proven not executed. */
  readonly maxRedispatches?: number | undefined;
  /** SAGA_REDISPATCH_MIN_SPAN_MS for the same (default `DEFAULT_REDISPATCH_MIN_SPAN_MS`). */
  readonly redispatchMinSpanMs?: number | undefined;
  /**
   * SAGA_MAX_STEPS_PER_RUN, as the API is configured with (default 1,000): a `stepIdx` past it is refused
   * 400, a new step at a full run's cursor 409 STEP_LIMIT, as by the API.
   */
  readonly maxStepsPerRun?: number | undefined;
}

/** What the caller learns at once; the outcome comes later, through the client or the run view. */
export interface CallerIntent {
  readonly stepIdx: number;
  readonly idempotencyKey: string;
  /**
   * INTENDED (sent once the caller commits) or AWAITING_APPROVAL for a new step; for a retry, the existing
   * step's status as it is (CONFIRMED, FAILED, UNKNOWN, …).
   */
  readonly status: StepStatus;
  /** True for a retry of an existing step: nothing new was intended. */
  readonly replayed: boolean;
  /**
   * A retry of an UNKNOWN step (or of an INTENDED one whose lease ran out): the API would ask the vendor by
   * key now, but a lookup calls the real system and must not run inside the caller's transaction, so the
   * step is returned as it is; the reconciler settles it, and the caller reads the outcome later.
   */
  readonly lookupDeferred: boolean;
}

/** Why one hour: the API's default APPROVAL_TTL_MS. */
const DEFAULT_APPROVAL_TTL_MS = 3_600_000;
const SAVEPOINT = 'agent_saga_intake';

/**
 * The request fields the API's body schema checks (`callBody`), with the same bounds; the cap on step
 * indices is checked by the intake itself (`checkRequestedIndices`), against `maxStepsPerRun`.
 */
const requestSchema = z.object({
  tenantId: z.string().min(1),
  runId: z.string().min(1),
  tool: z.string().min(1),
  stepIdx: z.number().int().min(0).optional(),
  dependsOn: z.array(z.number().int().min(0)).max(1_000).optional(),
  decision: callDecisionSchema.optional(),
});

/**
 * Records a tool intent inside a transaction the caller owns (the transactional outbox at the caller): the
 * caller's own change and the intent commit together or not at all. The same rules as
 * `POST /v1/runs/{id}/calls` for a new or retried step, by the same code (`callIntake`): the run lock, step
 * resolution, arguments parsed by the tool's schema, DUPLICATE_OPERATION, a governed run's `bindCall`
 * (NOT_IN_DEFINITION, PLAN_MISMATCH, BUDGET_EXCEEDED, money holds), approvals for irreversible tools; then
 * the INTENDED row, its first event and its outbox message.
 *
 * It never commits and never publishes: the outbox row's NOTIFY (`notifyRelay`, no relay grace) is sent by
 * Postgres at the caller's commit, the relay publishes the job, the executors take it as for an HTTP call.
 * A rolled-back caller transaction leaves nothing, so nothing is sent.
 *
 * Decisions:
 * - Everything that needs no database (the request, the tool, its arguments) is checked before the first
 *   statement; the rest runs under a SAVEPOINT, so a refusal (a 4xx of the API, thrown as the same error
 *   class) rolls back only what the intake did and the caller's transaction stays usable.
 * - The saga tables are unqualified in core's SQL (each role's connection puts its schema on the search
 *   path), so the intake sets `search_path` to `schema` with `set_config(…, true)` (SET LOCAL) inside the
 *   savepoint and restores the caller's value before releasing it: the caller's later statements resolve
 *   their own names as before. A refusal's ROLLBACK TO SAVEPOINT restores it too.
 * - A `pg` client is wrapped in a Kysely whose pool is that one client (released as a no-op), so core's SQL
 *   runs on the caller's connection and transaction; a kysely transaction is used `withoutPlugins()` (a
 *   CamelCasePlugin would rename core's columns). Both are typed as core's transaction: only the type tag
 *   differs, the connection is the caller's open transaction.
 * - A STEP_UNRESOLVED for a settled outcome the run had not delivered (a call without `stepIdx` naming
 *   another tool) marks it delivered and throws, as the API does; the mark stays in the caller's
 *   transaction (kept if the caller commits anyway).
 * - The caller's connection must parse timestamps as `pg` does by default (Date), as core's pool does.
 */
export async function recordCallerIntent<DB>(
  trx: CallerTransaction<DB>,
  request: CallerIntentRequest,
  opts: CallerIntakeOptions,
): Promise<CallerIntent> {
  if (!SCHEMA_NAME.test(opts.schema))
    throw new RangeError(`schema: invalid schema name ${JSON.stringify(opts.schema)}`);
  const req = parseRequest(request);
  const tool = opts.registry.require(req.tool);
  if (tool.class === ToolClass.PURE)
    throw new BadRequestError('tool', `tool: ${tool.name} is pure: it leaves no intent, call it directly`);
  const args = parseCallArgs(tool, request.args);
  const db = sagaTrxOf(trx);
  await openSavepoint(db);
  let outcome: Awaited<ReturnType<typeof callIntake>>;
  try {
    const { rows } = await sql<{ previous: string }>`
      SELECT current_setting('search_path') AS previous, set_config('search_path', ${opts.schema}, true)`.execute(
      db,
    );
    outcome = await callIntake(db, {
      tenantId: req.tenantId,
      runId: req.runId,
      tool,
      args,
      stepIdx: req.stepIdx,
      dependsOn: req.dependsOn,
      decision: req.decision,
      registry: opts.registry,
      definitions: opts.definitions,
      schema: opts.schema,
      log: opts.log ?? SILENT,
      fastPath: false,
      relayGraceMs: 0,
      approvalTtlMs: opts.approvalTtlMs ?? DEFAULT_APPROVAL_TTL_MS,
      redispatchBudget: {
        maxRedispatches: opts.maxRedispatches ?? DEFAULT_MAX_REDISPATCHES,
        minSpanMs: opts.redispatchMinSpanMs,
      },
      maxStepsPerRun: opts.maxStepsPerRun,
    });
    await sql`SELECT set_config('search_path', ${rows[0]!.previous}, true)`.execute(db);
  } catch (err) {
    await rollbackSavepoint(db);
    throw err;
  }
  await sql.raw(`RELEASE SAVEPOINT ${SAVEPOINT}`).execute(db);
  if (outcome.kind === 'refused') throw outcome.error;
  const { step } = outcome;
  return {
    stepIdx: step.step_idx,
    idempotencyKey: step.idempotency_key,
    status: step.status,
    replayed: outcome.kind === 'lookup' || outcome.replayed,
    lookupDeferred: outcome.kind === 'lookup',
  };
}

const SILENT: Logger = pino({ level: 'silent' });

function parseRequest(request: CallerIntentRequest): z.infer<typeof requestSchema> {
  const parsed = requestSchema.safeParse(request);
  if (parsed.success) return parsed.data;
  const issues: FieldIssue[] = parsed.error.issues.map((i) => ({
    field: i.path.map(String).join('.'),
    message: i.message,
  }));
  const first = issues[0]!;
  throw new BadRequestError(first.field, `${first.field}: ${first.message}`, issues);
}

/** Core's view of the caller's connection (see the decisions above). */
function sagaTrxOf<DB>(trx: CallerTransaction<DB>): SagaTrx {
  if (isKyselyTransaction(trx)) return trx.withoutPlugins() as unknown as SagaTrx;
  const client: PostgresPoolClient = {
    query: trx.query.bind(trx),
    release: () => {}, // the caller's connection: never ours to release
  };
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: { connect: () => Promise.resolve(client), end: async () => {} } }),
  });
  return db as unknown as SagaTrx;
}

function isKyselyTransaction<DB>(trx: CallerTransaction<DB>): trx is Transaction<DB> {
  return 'isTransaction' in trx && typeof (trx as { withoutPlugins?: unknown }).withoutPlugins === 'function';
}

/** Why 25P01 (no_active_sql_transaction): a `pg` client on which the caller has not run BEGIN. */
async function openSavepoint(db: SagaTrx): Promise<void> {
  try {
    await sql.raw(`SAVEPOINT ${SAVEPOINT}`).execute(db);
  } catch (err) {
    if ((err as { code?: unknown }).code === '25P01')
      throw new BadRequestError('trx', 'trx: not inside a transaction; run BEGIN first (the caller commits)');
    throw err;
  }
}

/**
 * Undoes what the intake did (rows, locks, the search path). If that fails too (a broken connection), the
 * intake's own error is the one thrown: the caller's transaction is lost either way and must roll back.
 */
async function rollbackSavepoint(db: SagaTrx): Promise<void> {
  try {
    await sql.raw(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`).execute(db);
    await sql.raw(`RELEASE SAVEPOINT ${SAVEPOINT}`).execute(db);
  } catch {
    // the original error follows
  }
}
