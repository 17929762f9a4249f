import { sql } from 'kysely';
import type { SagaDb, SagaTrx } from '../db/connect.js';
import { preparedAs } from '../db/prepared-statements.js';
import type { RunBudget, RunPolicy, RunRow, StepRow } from '../db/schema.js';
import { readDbNow } from '../db/db-clock.js';
import type { RunBinding } from '../sagas/bind-run.js';
import { NotFoundError } from '../errors/errors.js';
import { ApprovalStatus } from '../review/approvals/approval-status.js';
import { CorrectionStatus } from '../review/corrections/correction-status.js';
import { ReviewStatus } from '../review/cases/case-status.js';
import { RunStatus } from './run-status.js';
import { StepEventKind } from '../steps/step-event-kind.js';
import { appendStepEvent } from '../steps/append-event.js';
import { TokenScope } from '../auth/token-scope.js';
import { visibleRunsOf, type RunAccess } from './run-access.js';

/** Run ids that clients may choose. */
export const RUN_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface CreateRunResult {
  readonly run: RunRow;
  /** False when the run already existed for this tenant (an idempotent repeat). */
  readonly created: boolean;
}

/**
 * Creates a run, or returns the tenant's existing run with that id. Another tenant's id is NotFound-safe:
 * it is reported as taken without revealing anything about that run.
 *
 * `binding` (core's `bindRun`, checked before this is called) fills the columns of migration 0013; without
 * it the run is unbound and the row is exactly what it was before them. A definition's `deadlineMs` is
 * added to the creation time read in this transaction (`now()`, the value `created_at` takes), so the
 * deadline is on the database's clock and is stored twice: in `budget.deadline` (ISO, as the run view shows
 * it) and in `deadline_at` (indexed for the deadline sweep).
 *
 * `creator`, the token that asks (the API's principal), is stored as `created_by_token`, what an own-runs
 * scope checks; without it (a direct call of core) the column stays null. A repeated id is answered by the
 * scope rule (`visibleRunsOf`): an own-runs token repeating another token's run id is told it is taken,
 * as another tenant is, never shown that run.
 */
export async function createRun(
  db: SagaDb,
  input: {
    runId: string;
    tenantId: string;
    metadata: Record<string, unknown>;
    policy?: RunPolicy;
    binding?: RunBinding;
    creator?: Pick<RunAccess, 'tokenId' | 'scope'>;
  },
): Promise<CreateRunResult | { readonly taken: true }> {
  const b = input.binding;
  const policy = b ? b.policy : (input.policy ?? {});
  const inserted = await db.transaction().execute(async (trx) => {
    const budget =
      b && b.deadlineMs !== null
        ? { ...b.budget, deadline: new Date((await readDbNow(trx)).getTime() + b.deadlineMs).toISOString() }
        : (b?.budget ?? {});
    const row = await trx
      .insertInto('runs')
      .values({
        run_id: input.runId,
        tenant_id: input.tenantId,
        status: RunStatus.RUNNING,
        status_reason: null,
        metadata: JSON.stringify(input.metadata),
        policy: JSON.stringify(policy),
        created_by_token: input.creator?.tokenId ?? null,
        ...(b && (b.governed || b.goal !== null || b.actor !== null) ? boundColumns(b, budget) : {}),
      })
      .onConflict((oc) => oc.column('run_id').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row)
      await appendStepEvent(trx, {
        runId: row.run_id,
        stepIdx: null,
        kind: StepEventKind.RUN_TRANSITION,
        from: null,
        to: row.status,
        cause: 'run created',
        detail: {
          policy,
          ...(b && (b.governed || b.goal !== null || b.actor !== null)
            ? { definition: b.definition, budget, planHash: b.planHash }
            : {}),
          ...(b?.floor ? { floor: b.floor } : {}),
        },
      });
    return row;
  });
  if (inserted) return { run: inserted, created: true };
  const access: RunAccess = {
    tenantId: input.tenantId,
    tokenId: input.creator?.tokenId ?? null,
    scope: input.creator?.scope ?? TokenScope.TENANT,
  };
  const existing = await db
    .selectFrom('runs')
    .selectAll()
    .where('run_id', '=', input.runId)
    .where(visibleRunsOf(access))
    .executeTakeFirst();
  if (!existing) return { taken: true };
  return { run: existing, created: false };
}

/** The 0013 columns of a run with a binding (an unbound run's row leaves them at their defaults). */
function boundColumns(b: RunBinding, budget: RunBudget) {
  return {
    definition_name: b.definition?.name ?? null,
    definition_version: b.definition?.version ?? null,
    goal: b.goal,
    actor: b.actor,
    plan: b.plan ? JSON.stringify(b.plan) : null,
    plan_hash: b.planHash,
    budget: JSON.stringify(budget),
    deadline_at: budget.deadline === undefined ? null : new Date(budget.deadline),
    governed: b.governed,
  };
}

/** Reads a run of this tenant; another tenant's run is indistinguishable from a missing one. */
export async function getRun(db: SagaDb | SagaTrx, tenantId: string, runId: string): Promise<RunRow> {
  const run = await db
    .selectFrom('runs')
    .selectAll()
    .where('run_id', '=', runId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!run) throw new NotFoundError(`run ${runId} not found`);
  return run;
}

/** Locks the run row for the rest of the transaction: intake of one run's steps is serialised. */
export async function lockRun(trx: SagaTrx, tenantId: string, runId: string): Promise<RunRow> {
  const run = await trx
    .selectFrom('runs')
    .selectAll()
    .where('run_id', '=', runId)
    .where('tenant_id', '=', tenantId)
    .forUpdate()
    .modifyEnd(preparedAs('saga_lock_run'))
    .executeTakeFirst();
  if (!run) throw new NotFoundError(`run ${runId} not found`);
  return run;
}

/**
 * Locks a run the harness itself names (a job, a sweep, a decision already checked for its tenant) for the
 * rest of the transaction; undefined when there is no such run. Callers that act for a tenant use
 * {@link lockRun}.
 */
export async function lockRunById(trx: SagaTrx, runId: string): Promise<RunRow | undefined> {
  return trx.selectFrom('runs').selectAll().where('run_id', '=', runId).forUpdate().executeTakeFirst();
}

export async function listSteps(db: SagaDb | SagaTrx, runId: string): Promise<StepRow[]> {
  return db.selectFrom('saga_log').selectAll().where('run_id', '=', runId).orderBy('step_idx').execute();
}

export async function touchRun(trx: SagaTrx, runId: string): Promise<void> {
  await trx
    .updateTable('runs')
    .set({ updated_at: sql<Date>`now()` })
    .where('run_id', '=', runId)
    .execute();
}

/** A run in a list: its status and counts of what waits for a person. */
export interface RunListRow extends RunRow {
  readonly steps: number;
  readonly pending_approvals: number;
  readonly open_cases: number;
  readonly open_corrections: number;
}

/**
 * The runs `access` may see (`visibleRunsOf`: a tenant's, or an own-runs token's own), newest first (index
 * `runs_tenant_created`), optionally of one status.
 */
export async function listRuns(
  db: SagaDb,
  f: { access: RunAccess; status?: RunStatus | undefined; limit: number },
): Promise<RunListRow[]> {
  let q = db
    .selectFrom('runs')
    .selectAll('runs')
    .select([
      sql<number>`(SELECT count(*)::int FROM saga_log s WHERE s.run_id = runs.run_id)`.as('steps'),
      sql<number>`(SELECT count(*)::int FROM approvals a WHERE a.run_id = runs.run_id AND a.status = ${ApprovalStatus.PENDING})`.as(
        'pending_approvals',
      ),
      sql<number>`(SELECT count(*)::int FROM cases c WHERE c.run_id = runs.run_id AND c.status = ${ReviewStatus.OPEN})`.as(
        'open_cases',
      ),
      sql<number>`(SELECT count(*)::int FROM corrections k WHERE k.run_id = runs.run_id AND k.status = ${CorrectionStatus.OPEN})`.as(
        'open_corrections',
      ),
    ])
    .where(visibleRunsOf(f.access));
  if (f.status) q = q.where('runs.status', '=', f.status);
  return q.orderBy('runs.created_at', 'desc').orderBy('runs.run_id').limit(f.limit).execute();
}
