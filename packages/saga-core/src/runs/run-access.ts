import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { SagaDb, SagaTrx } from '../db/connect.js';
import type { Database, RunRow } from '../db/schema.js';
import { NotFoundError } from '../errors/errors.js';
import { TokenScope } from '../auth/token-scope.js';

// The one home of the rule "which runs may this token see": a tenant-scope token, every run of its tenant;
// an own-runs token, only the runs it created (`runs.created_by_token`). Every run route of the API reads
// its run through {@link getRunFor} or {@link assertRunInScope}, the run list filters by
// {@link visibleRunsOf}, and `createRun` answers a repeated id by the same rule. A run outside the scope is
// NotFoundError exactly as an absent one (same code, same message), so run ids cannot be probed.
//
// Why a check before the operation, not inside its transaction: `created_by_token` is written once, by the
// insert that creates the run, and never updated, so what the check reads cannot change before the
// operation's own tenant-checked lock (`lockRun`) reads the run again.

/** Who looks at runs: the part of a `Principal` that decides which runs it may see. */
export interface RunAccess {
  readonly tenantId: string;
  /**
   * The token acting (`tok_…`), what an own-runs scope compares with `runs.created_by_token`; null when no
   * token acts (a direct call of core), which owns no run.
   */
  readonly tokenId: string | null;
  readonly scope: TokenScope;
}

/**
 * The condition on `runs` that keeps only the runs `access` may see: its tenant's, and for an own-runs token
 * those it created. A run with a null creator (created before migration 0017, or outside the API) is no
 * own-runs token's.
 */
export function visibleRunsOf(access: RunAccess) {
  return (eb: ExpressionBuilder<Database, 'runs'>): Expression<SqlBool> =>
    access.scope === TokenScope.OWN_RUNS
      ? eb.and([eb('runs.tenant_id', '=', access.tenantId), eb('runs.created_by_token', '=', access.tokenId)])
      : eb('runs.tenant_id', '=', access.tenantId);
}

/**
 * Reads a run `access` may see; any other run, of another tenant or (own-runs) of another token, is
 * NotFoundError, worded as for a missing run.
 */
export async function getRunFor(db: SagaDb | SagaTrx, access: RunAccess, runId: string): Promise<RunRow> {
  const run = await db
    .selectFrom('runs')
    .selectAll()
    .where('run_id', '=', runId)
    .where(visibleRunsOf(access))
    .executeTakeFirst();
  if (!run) throw new NotFoundError(`run ${runId} not found`);
  return run;
}

/**
 * Refuses, before anything is read under a lock or written, a run an own-runs token may not act on
 * (NotFoundError, as {@link getRunFor}). For a tenant-scope token it reads nothing: the operation's own
 * tenant-checked lookup (`lockRun`, `getRun`) decides, as it always has, so the hot path of a call pays
 * nothing for a scope it does not have.
 */
export async function assertRunInScope(
  db: SagaDb | SagaTrx,
  access: RunAccess,
  runId: string,
): Promise<void> {
  if (access.scope !== TokenScope.OWN_RUNS) return;
  await getRunFor(db, access, runId);
}
