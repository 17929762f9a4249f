import { sql } from 'kysely';
import type { SagaDb, SagaTrx } from '../db/connect.js';
import type { ApprovalRow, CaseRow, CorrectionRow, StepRow } from '../db/schema.js';
import { NotFoundError } from '../errors/errors.js';
import { Audience } from './corrections/audience.js';
import { type ApprovalKind, type ApprovalStatus } from './approvals/approval-status.js';
import { type CorrectionStatus } from './corrections/correction-status.js';
import { type ReviewStatus } from './cases/case-status.js';

/**
 * The items people decide on: approvals, manual-intervention cases and corrections, per run (the run view)
 * and per tenant (the operator's queues). Every tenant-wide read filters on `tenant_id`: an operator never
 * sees another tenant's items.
 */

/** The corrections of one run, by step (tenant already checked by the caller). */
export async function listCorrections(db: SagaDb | SagaTrx, runId: string): Promise<CorrectionRow[]> {
  return db.selectFrom('corrections').selectAll().where('run_id', '=', runId).orderBy('step_idx').execute();
}

/** The manual-intervention cases of one run, oldest first (tenant already checked). */
export async function listCases(db: SagaDb | SagaTrx, runId: string): Promise<CaseRow[]> {
  return db.selectFrom('cases').selectAll().where('run_id', '=', runId).orderBy('id').execute();
}

/** The approvals of one run, oldest first (tenant already checked). */
export async function listApprovals(db: SagaDb | SagaTrx, runId: string): Promise<ApprovalRow[]> {
  return db.selectFrom('approvals').selectAll().where('run_id', '=', runId).orderBy('created_at').execute();
}

export interface QueueFilter<S extends string> {
  readonly tenantId: string;
  readonly status?: S | undefined;
  readonly runId?: string | undefined;
  readonly limit: number;
}

/** A tenant's approvals, the soonest deadline first (the inbox), of one kind when `kind` is given. */
export async function approvalQueue(
  db: SagaDb,
  f: QueueFilter<ApprovalStatus> & { readonly kind?: ApprovalKind | undefined },
): Promise<ApprovalRow[]> {
  let q = db.selectFrom('approvals').selectAll().where('tenant_id', '=', f.tenantId);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.kind) q = q.where('kind', '=', f.kind);
  if (f.runId) q = q.where('run_id', '=', f.runId);
  return q.orderBy('expires_at').orderBy('id').limit(f.limit).execute();
}

/** A tenant's cases, oldest first. */
export async function caseQueue(db: SagaDb, f: QueueFilter<ReviewStatus>): Promise<CaseRow[]> {
  let q = db.selectFrom('cases').selectAll().where('tenant_id', '=', f.tenantId);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.runId) q = q.where('run_id', '=', f.runId);
  return q.orderBy('id').limit(f.limit).execute();
}

/**
 * A tenant's corrections ranked by audience: those only internal audiences saw first, customer-facing ones
 * last (they need the most care), then oldest first.
 */
export async function correctionQueue(
  db: SagaDb,
  f: QueueFilter<CorrectionStatus>,
): Promise<CorrectionRow[]> {
  let q = db.selectFrom('corrections').selectAll().where('tenant_id', '=', f.tenantId);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.runId) q = q.where('run_id', '=', f.runId);
  return q
    .orderBy(sql`${Audience.CUSTOMER} = ANY(audience)`)
    .orderBy('created_at')
    .orderBy('id')
    .limit(f.limit)
    .execute();
}

/** The steps of the given runs, for presenting queue items (their tools, the proposals' arguments). */
export async function stepsOfRuns(db: SagaDb, runIds: readonly string[]): Promise<StepRow[]> {
  if (!runIds.length) return [];
  return db
    .selectFrom('saga_log')
    .selectAll()
    .where('run_id', 'in', [...new Set(runIds)])
    .orderBy('run_id')
    .orderBy('step_idx')
    .execute();
}

/** One approval of this tenant; another tenant's is indistinguishable from a missing one. */
export async function getApproval(db: SagaDb | SagaTrx, tenantId: string, id: string): Promise<ApprovalRow> {
  const row = await db
    .selectFrom('approvals')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`approval ${id} not found`);
  return row;
}
